/* cswap: remote/remote-negotiate.h — one connection to the server, from
 * the TCP connect to NBD_OPT_GO over kernel TLS (or plain TCP), ready
 * for the driver.
 */
#ifndef CSWAP_REMOTE_NEGOTIATE_H
#define CSWAP_REMOTE_NEGOTIATE_H

#include <openssl/ssl.h>

#include "nbd-channel.h"

/* Where the device's export is, and how to reach it. */
struct remote_target {
  const char *host, *port, *export;
  const char *tls_hostname;     /* the name the server's certificate carries */
  const char *server;           /* "HOST:PORT", for messages */
  SSL_CTX *context;             /* NULL: plain TCP (--no-tls) */
};

/* CHANNEL negotiated to the transmission phase of TARGET's export, its
 * socket as the nbd driver wants it; the export's details into *INFO.
 * -1 after printing why (CHANNEL then still wants remote_release).
 */
extern int remote_negotiate (const struct remote_target *target,
                             struct nbd_channel *channel,
                             struct nbd_export_info *info);

/* Lets go of our side of CHANNEL (the driver keeps its own reference to a
 * socket it was handed).  No SSL_shutdown: a close_notify would reach the
 * driver as an error.
 */
extern void remote_release (struct nbd_channel *channel);

#endif
