/* cswap: remote/nbd-channel.c — the client's side of the NBD handshake
 * (the NBD protocol's doc/proto.md): fixed newstyle, then options, each
 * answered by one or more replies.  After NBD_OPT_STARTTLS everything
 * goes through the TLS session; with kernel TLS, SSL_read and SSL_write
 * are the kernel's record layer, the same one the nbd driver will use.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>

#include "contents-id.h"
#include "ktls-session.h"
#include "nbd-channel.h"

#define NBD_MAGIC UINT64_C(0x4e42444d41474943)          /* "NBDMAGIC" */
#define NBD_IHAVEOPT UINT64_C(0x49484156454f5054)       /* "IHAVEOPT" */
#define NBD_REPLY_MAGIC UINT64_C(0x3e889045565a9)
#define NBD_FLAG_FIXED_NEWSTYLE 1
#define NBD_FLAG_NO_ZEROES 2
#define NBD_OPT_STARTTLS 5
#define NBD_OPT_GO 7
#define NBD_REP_ACK 1
#define NBD_REP_INFO 3
#define NBD_REP_FLAG_ERROR (UINT32_C(1) << 31)
#define NBD_INFO_EXPORT 0
#define NBD_INFO_DESCRIPTION 2
/* The longest reply payload taken: an error's message or an info. */
#define NBD_REPLY_MAX 4096

static int
channel_error (const struct nbd_channel *channel, const char *what)
{
  unsigned long tls_error = ERR_get_error ();
  char buf[256];

  if (tls_error)
    fprintf (stderr, "cswap-connect: %s: %s: %s\n", channel->server, what,
             tls_reason (tls_error, buf, sizeof buf));
  else if (errno)
    fprintf (stderr, "cswap-connect: %s: %s: %m\n", channel->server, what);
  else
    fprintf (stderr, "cswap-connect: %s: %s: the server closed the connection\n",
             channel->server, what);
  return -1;
}

/* Moves all LEN bytes of BUF through the channel: in (read) or out. */
static int
channel_transfer (struct nbd_channel *channel, char *buf, size_t len, bool in,
                  const char *what)
{
  while (len > 0) {
    ssize_t n;

    errno = 0;
    if (channel->ssl)
      n = in ? SSL_read (channel->ssl, buf, len) : SSL_write (channel->ssl, buf, len);
    else
      n = in ? recv (channel->fd, buf, len, 0) : send (channel->fd, buf, len, MSG_NOSIGNAL);
    if (n <= 0) {
      if (!channel->ssl && n < 0 && errno == EINTR)
        continue;
      return channel_error (channel, what);
    }
    buf += n;
    len -= n;
  }
  return 0;
}

static int
channel_write (struct nbd_channel *channel, const void *buf, size_t len,
               const char *what)
{
  return channel_transfer (channel, (char *) buf, len, false, what);
}

static int
channel_read (struct nbd_channel *channel, void *buf, size_t len,
              const char *what)
{
  return channel_transfer (channel, buf, len, true, what);
}

int
nbd_greet (struct nbd_channel *channel)
{
  struct {
    uint64_t magic, ihaveopt;
    uint16_t flags;
  } __attribute__ ((packed)) greeting;
  uint16_t server_flags;
  uint32_t client_flags;

  if (channel_read (channel, &greeting, sizeof greeting, "reading the greeting"))
    return -1;
  server_flags = be16toh (greeting.flags);
  if (be64toh (greeting.magic) != NBD_MAGIC
      || be64toh (greeting.ihaveopt) != NBD_IHAVEOPT
      || !(server_flags & NBD_FLAG_FIXED_NEWSTYLE)) {
    fprintf (stderr, "cswap-connect: %s: not a fixed newstyle NBD server\n",
             channel->server);
    return -1;
  }
  client_flags = htobe32 (NBD_FLAG_FIXED_NEWSTYLE
                          | (server_flags & NBD_FLAG_NO_ZEROES));
  return channel_write (channel, &client_flags, sizeof client_flags,
                        "answering the greeting");
}

static int
send_option (struct nbd_channel *channel, uint32_t option,
             const void *data, uint32_t len, const char *name)
{
  struct {
    uint64_t magic;
    uint32_t option, len;
  } __attribute__ ((packed)) header = {
    htobe64 (NBD_IHAVEOPT), htobe32 (option), htobe32 (len)
  };

  if (channel_write (channel, &header, sizeof header, name))
    return -1;
  return len ? channel_write (channel, data, len, name) : 0;
}

/* One reply to OPTION: its type into *type, its payload (at most
 * NBD_REPLY_MAX bytes) into data, its length into *len.  An error reply
 * is reported here, with the server's message, and returns -1.
 */
static int
read_reply (struct nbd_channel *channel, uint32_t option, const char *name,
            uint32_t *type, char data[NBD_REPLY_MAX + 1], uint32_t *len)
{
  struct {
    uint64_t magic;
    uint32_t option, type, len;
  } __attribute__ ((packed)) header;

  if (channel_read (channel, &header, sizeof header, name))
    return -1;
  *type = be32toh (header.type);
  *len = be32toh (header.len);
  if (be64toh (header.magic) != NBD_REPLY_MAGIC
      || be32toh (header.option) != option || *len > NBD_REPLY_MAX) {
    fprintf (stderr, "cswap-connect: %s: %s: a malformed reply\n",
             channel->server, name);
    return -1;
  }
  if (channel_read (channel, data, *len, name))
    return -1;
  data[*len] = '\0';
  if (*type & NBD_REP_FLAG_ERROR) {
    /* NBD_REP_ERR_*, from 1. */
    static const char *const errors[] = {
      "unsupported option", "forbidden by policy", "invalid request",
      "unsupported by the platform", "TLS required", "unknown export",
      "server shutting down", "block size required", "request too big",
    };
    uint32_t error = *type & ~NBD_REP_FLAG_ERROR;

    fprintf (stderr, "cswap-connect: %s: the server refused %s: %s%s%s\n",
             channel->server, name,
             error >= 1 && error <= sizeof errors / sizeof *errors
             ? errors[error - 1] : "an unknown error",
             *len ? ": " : "", data);
    return -1;
  }
  return 0;
}

int
nbd_start_tls (struct nbd_channel *channel)
{
  char data[NBD_REPLY_MAX + 1];
  uint32_t type, len;

  if (send_option (channel, NBD_OPT_STARTTLS, NULL, 0, "NBD_OPT_STARTTLS")
      || read_reply (channel, NBD_OPT_STARTTLS, "NBD_OPT_STARTTLS",
                     &type, data, &len))
    return -1;
  if (type != NBD_REP_ACK) {
    fprintf (stderr, "cswap-connect: %s: NBD_OPT_STARTTLS: no acknowledgement\n",
             channel->server);
    return -1;
  }
  return 0;
}

/* The contents id at the end of an export's DESCRIPTION, if it has one. */
static void
parse_contents_id (const char *description, struct nbd_export_info *info)
{
  const char *label = strstr (description, CONTENTS_ID_LABEL);
  const char *digits;
  char *end;

  if (label == NULL)
    return;
  digits = label + strlen (CONTENTS_ID_LABEL);
  if (strspn (digits, "0123456789abcdef") != CONTENTS_ID_DIGITS)
    return;
  info->contents_id = strtoull (digits, &end, 16);
  info->has_contents_id = end == digits + CONTENTS_ID_DIGITS;
}

int
nbd_go (struct nbd_channel *channel, const char *export,
        struct nbd_export_info *info)
{
  uint32_t name_len = strlen (export), type, len;
  char request[4 + NBD_REPLY_MAX + 4], data[NBD_REPLY_MAX + 1];
  uint32_t be_name_len = htobe32 (name_len);
  /* One information request: the description, where the id is. */
  uint16_t info_requests[2] = { htobe16 (1), htobe16 (NBD_INFO_DESCRIPTION) };
  bool have_export = false;

  if (name_len > NBD_REPLY_MAX) {
    fprintf (stderr, "cswap-connect: export name too long (%u bytes)\n", name_len);
    return -1;
  }
  *info = (struct nbd_export_info) { 0 };
  memcpy (request, &be_name_len, 4);
  memcpy (request + 4, export, name_len);
  memcpy (request + 4 + name_len, info_requests, sizeof info_requests);
  if (send_option (channel, NBD_OPT_GO, request,
                   4 + name_len + sizeof info_requests, "NBD_OPT_GO"))
    return -1;
  for (;;) {
    uint16_t info_type, flags;
    uint64_t size;

    if (read_reply (channel, NBD_OPT_GO, "NBD_OPT_GO", &type, data, &len))
      return -1;
    if (type == NBD_REP_ACK)
      break;
    if (type != NBD_REP_INFO || len < 2)
      continue;
    memcpy (&info_type, data, 2);
    if (be16toh (info_type) == NBD_INFO_DESCRIPTION) {
      parse_contents_id (data + 2, info);     /* read_reply ended it with \0 */
      continue;
    }
    if (be16toh (info_type) != NBD_INFO_EXPORT || len < 12)
      continue;
    memcpy (&size, data + 2, 8);
    memcpy (&flags, data + 10, 2);
    info->size = be64toh (size);
    info->transmission_flags = be16toh (flags);
    have_export = true;
  }
  if (!have_export) {
    fprintf (stderr, "cswap-connect: %s: NBD_OPT_GO: no NBD_INFO_EXPORT\n",
             channel->server);
    return -1;
  }
  return 0;
}
