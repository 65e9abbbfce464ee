/* cswap: remote/ktls-session.c — the TLS handshake in userspace
 * (OpenSSL), the session's keys then in the kernel (SSL_OP_ENABLE_KTLS:
 * OpenSSL sets TCP_ULP "tls" and TLS_TX, TLS_RX itself).
 *
 * TLS 1.2 only.  Once the nbd driver owns the socket, any record that is
 * not data fails its read (EIO), and the device with it: a TLS 1.3
 * server sends KeyUpdate on its own (GnuTLS, nbdkit's, after 2^24
 * AES-GCM records, about 32 GiB of pages read back), which nothing
 * would be left to answer.  TLS 1.2 has no such message.  AES-GCM with
 * ephemeral keys: the ciphers kernel TLS takes, with forward secrecy.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "ktls-session.h"

#define KTLS_CIPHERS "ECDHE+AESGCM:DHE+AESGCM"

const char *
tls_reason (unsigned long error, char *buf, size_t len)
{
  const char *reason = ERR_reason_error_string (error);

  if (reason)
    return reason;
  if (ERR_SYSTEM_ERROR (error))
    return strerror (ERR_GET_REASON (error));
  ERR_error_string_n (error, buf, len);
  return buf;
}

static void
print_tls_error (const char *server, const char *what)
{
  unsigned long error = ERR_get_error ();
  char buf[256];

  fprintf (stderr, "cswap-connect: %s%s%s: %s\n", server ? server : "",
           server ? ": " : "", what,
           error ? tls_reason (error, buf, sizeof buf) : "failed");
}

SSL_CTX *
ktls_context_new (const struct tls_files *files)
{
  SSL_CTX *context = SSL_CTX_new (TLS_client_method ());
  int loaded;

  if (context == NULL) {
    print_tls_error (NULL, "SSL_CTX_new");
    return NULL;
  }
  SSL_CTX_set_min_proto_version (context, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version (context, TLS1_2_VERSION);
  SSL_CTX_set_options (context, SSL_OP_ENABLE_KTLS | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_verify (context, SSL_VERIFY_PEER, NULL);
  if (!SSL_CTX_set_cipher_list (context, KTLS_CIPHERS)) {
    print_tls_error (NULL, "cipher list " KTLS_CIPHERS);
    goto fail;
  }
  loaded = files->cacertfile
    ? SSL_CTX_load_verify_locations (context, files->cacertfile, NULL)
    : SSL_CTX_set_default_verify_paths (context);
  if (!loaded) {
    print_tls_error (NULL, files->cacertfile ? files->cacertfile : "the system's CAs");
    goto fail;
  }
  if (files->certfile
      && (!SSL_CTX_use_certificate_chain_file (context, files->certfile)
          || !SSL_CTX_use_PrivateKey_file (context, files->keyfile, SSL_FILETYPE_PEM)
          || !SSL_CTX_check_private_key (context))) {
    print_tls_error (NULL, files->certfile);
    goto fail;
  }
  return context;

 fail:
  SSL_CTX_free (context);
  return NULL;
}

/* The server's certificate must name HOSTNAME: as an address if it is
 * one, as a DNS name (and sent as SNI) otherwise.
 */
static int
expect_name (SSL *ssl, const char *hostname)
{
  if (X509_VERIFY_PARAM_set1_ip_asc (SSL_get0_param (ssl), hostname))
    return 0;
  ERR_clear_error ();
  return SSL_set1_host (ssl, hostname) && SSL_set_tlsext_host_name (ssl, hostname)
    ? 0 : -1;
}

SSL *
ktls_handshake (SSL_CTX *context, int fd, const char *hostname,
                const char *server)
{
  SSL *ssl = SSL_new (context);
  long verified;

  if (ssl == NULL || expect_name (ssl, hostname) || !SSL_set_fd (ssl, fd)) {
    print_tls_error (server, "setting up the TLS session");
    goto fail;
  }
  if (SSL_connect (ssl) != 1) {
    verified = SSL_get_verify_result (ssl);
    if (verified != X509_V_OK)
      fprintf (stderr, "cswap-connect: %s: the server's certificate: %s\n",
               server, X509_verify_cert_error_string (verified));
    else
      print_tls_error (server, "TLS handshake (does the server take our certificate?"
                       " see its log)");
    goto fail;
  }
  if (!BIO_get_ktls_send (SSL_get_wbio (ssl)) || !BIO_get_ktls_recv (SSL_get_rbio (ssl))) {
    fprintf (stderr, "cswap-connect: %s: the kernel did not take the TLS session "
             "(sending: %s, receiving: %s; %s with %s): is the tls module "
             "loaded (modprobe tls)?\n", server,
             BIO_get_ktls_send (SSL_get_wbio (ssl)) ? "yes" : "no",
             BIO_get_ktls_recv (SSL_get_rbio (ssl)) ? "yes" : "no",
             SSL_get_version (ssl), SSL_get_cipher_name (ssl));
    goto fail;
  }
  return ssl;

 fail:
  SSL_free (ssl);
  return NULL;
}
