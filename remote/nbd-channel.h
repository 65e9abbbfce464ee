/* cswap: remote/nbd-channel.h — the NBD handshake of a client that hands
 * its connection to the kernel: fixed newstyle, NBD_OPT_STARTTLS and
 * NBD_OPT_GO, over a socket that is plain before STARTTLS and sealed by
 * TLS (kernel TLS once the handshake is done) after it.
 */
#ifndef CSWAP_NBD_CHANNEL_H
#define CSWAP_NBD_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>

/* One connection to the server: its socket and, once STARTTLS is done,
 * its TLS session (NULL before).  Every function here prints what went
 * wrong to stderr, naming the server, and returns -1.
 */
struct nbd_channel {
  int fd;
  SSL *ssl;
  const char *server;           /* "HOST:PORT", for messages */
};

/* What NBD_OPT_GO told of the export. */
struct nbd_export_info {
  uint64_t size;
  uint16_t transmission_flags;
  bool has_contents_id;         /* a cswap server's (contents-id.h) */
  uint64_t contents_id;
};

/* The fixed newstyle greeting, answered. */
extern int nbd_greet (struct nbd_channel *channel);
/* NBD_OPT_STARTTLS, acknowledged: the caller then does the TLS handshake. */
extern int nbd_start_tls (struct nbd_channel *channel);
/* NBD_OPT_GO for EXPORT: the export's size, flags and contents id
 * (from its description, NBD_INFO_DESCRIPTION) into *info.
 */
extern int nbd_go (struct nbd_channel *channel, const char *export,
                   struct nbd_export_info *info);

#endif
