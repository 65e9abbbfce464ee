/* cswap: remote/ktls-session.h — a TLS session whose records the kernel
 * seals and opens (kernel TLS), so that the nbd driver can be handed the
 * socket with no process left between it and the server.
 */
#ifndef CSWAP_KTLS_SESSION_H
#define CSWAP_KTLS_SESSION_H

#include <openssl/ssl.h>

struct tls_files {
  const char *certfile, *keyfile;       /* the client's, both or neither */
  const char *cacertfile;               /* NULL: the system's CAs */
  const char *hostname;                 /* to verify the server for */
};

/* OpenSSL's words for ERROR (from ERR_get_error), a system error's as
 * strerror's; BUF (LEN bytes) holds them if needed.
 */
extern const char *tls_reason (unsigned long error, char *buf, size_t len);

/* A client context for FILES: TLS 1.2, AES-GCM, the server verified.
 * NULL after printing why.
 */
extern SSL_CTX *ktls_context_new (const struct tls_files *files);

/* The handshake on FD (to SERVER, for messages), checked to have left
 * both directions to the kernel.  NULL after printing why.
 */
extern SSL *ktls_handshake (SSL_CTX *context, int fd, const char *hostname,
                            const char *server);

#endif
