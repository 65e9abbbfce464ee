/* cswap: remote/nbd-netlink.c — NBD_CMD_CONNECT over generic netlink,
 * as nbd-client does it (its netlink_configure), with the kernel's own
 * headers and no library: two requests, each acknowledged.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <linux/netlink.h>

#include "nbd-netlink.h"

/* Room for the requests here: a few attributes and up to
 * NBD_NETLINK_MAX_SOCKETS sockets (12 bytes each).
 */
#define MESSAGE_MAX 1024

struct message {
  union {
    struct nlmsghdr header;
    char bytes[MESSAGE_MAX];
  };
};

static void *
message_tail (struct message *message)
{
  return message->bytes + NLMSG_ALIGN (message->header.nlmsg_len);
}

/* Opens a (possibly nested) attribute; close it with attribute_end. */
static struct nlattr *
attribute_begin (struct message *message, uint16_t type)
{
  struct nlattr *attribute = message_tail (message);

  attribute->nla_type = type;
  attribute->nla_len = NLA_HDRLEN;
  message->header.nlmsg_len = NLMSG_ALIGN (message->header.nlmsg_len) + NLA_HDRLEN;
  return attribute;
}

static void
attribute_end (struct message *message, struct nlattr *attribute)
{
  attribute->nla_len = (char *) message_tail (message) - (char *) attribute;
}

static void
attribute_put (struct message *message, uint16_t type, const void *data,
               uint16_t len)
{
  struct nlattr *attribute = attribute_begin (message, type);

  memcpy ((char *) attribute + NLA_HDRLEN, data, len);
  message->header.nlmsg_len += len;
  attribute_end (message, attribute);
}

static void
message_init (struct message *message, uint16_t family, uint8_t command,
              uint8_t version)
{
  struct genlmsghdr genl = { .cmd = command, .version = version };

  memset (message, 0, sizeof *message);
  message->header.nlmsg_type = family;
  message->header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  message->header.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
  memcpy (NLMSG_DATA (&message->header), &genl, sizeof genl);
}

/* Sends MESSAGE and reads to its acknowledgement.  The first reply
 * that is not the acknowledgement goes to *reply, if REPLY is not NULL.
 * The kernel's errno (negated) or 0.
 */
static int
transact (int sock, struct message *message, struct message *reply)
{
  char buffer[8192] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  bool replied = false;

  if (send (sock, message, message->header.nlmsg_len, 0) < 0)
    return -errno;
  for (;;) {
    ssize_t n = recv (sock, buffer, sizeof buffer, 0);
    struct nlmsghdr *header;

    if (n < 0)
      return -errno;
    for (header = (struct nlmsghdr *) buffer; NLMSG_OK (header, (size_t) n);
         header = NLMSG_NEXT (header, n)) {
      if (header->nlmsg_type == NLMSG_ERROR)
        return ((struct nlmsgerr *) NLMSG_DATA (header))->error;
      if (reply && !replied && header->nlmsg_len <= sizeof *reply) {
        memcpy (reply, header, header->nlmsg_len);
        replied = true;
      }
    }
  }
}

/* The generic netlink family id of "nbd", or -1 (the module not loaded). */
static int
nbd_family (int sock)
{
  struct message request, reply;
  struct nlattr *attribute;
  int len, error;

  message_init (&request, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
  attribute_put (&request, CTRL_ATTR_FAMILY_NAME, NBD_GENL_FAMILY_NAME,
                 sizeof NBD_GENL_FAMILY_NAME);
  memset (&reply, 0, sizeof reply);
  error = transact (sock, &request, &reply);
  if (error) {
    fprintf (stderr, "cswap-connect: generic netlink family %s: %s "
             "(is the nbd module loaded?)\n", NBD_GENL_FAMILY_NAME, strerror (-error));
    return -1;
  }
  len = reply.header.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
  attribute = (struct nlattr *) ((char *) NLMSG_DATA (&reply.header) + GENL_HDRLEN);
  for (; len >= NLA_HDRLEN && attribute->nla_len >= NLA_HDRLEN
         && attribute->nla_len <= len;
       len -= NLA_ALIGN (attribute->nla_len),
       attribute = (struct nlattr *) ((char *) attribute + NLA_ALIGN (attribute->nla_len)))
    if ((attribute->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID) {
      uint16_t id;

      memcpy (&id, (char *) attribute + NLA_HDRLEN, sizeof id);
      return id;
    }
  fprintf (stderr, "cswap-connect: generic netlink: no id for family %s\n",
           NBD_GENL_FAMILY_NAME);
  return -1;
}

int
nbd_netlink_connect (const struct nbd_device_settings *settings,
                     const int *fds, unsigned n_fds)
{
  struct message request;
  struct nlattr *sockets;
  uint32_t index = settings->index;
  int sock, family, error = 0;

  assert (n_fds >= 1 && n_fds <= NBD_NETLINK_MAX_SOCKETS);
  sock = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  if (sock < 0) {
    perror ("cswap-connect: netlink socket");
    return -1;
  }
  family = nbd_family (sock);
  if (family < 0)
    goto out;
  message_init (&request, family, NBD_CMD_CONNECT, NBD_GENL_VERSION);
  attribute_put (&request, NBD_ATTR_INDEX, &index, sizeof index);
  attribute_put (&request, NBD_ATTR_SIZE_BYTES, &settings->size, sizeof settings->size);
  attribute_put (&request, NBD_ATTR_BLOCK_SIZE_BYTES, &settings->block_size,
                 sizeof settings->block_size);
  attribute_put (&request, NBD_ATTR_SERVER_FLAGS, &settings->server_flags,
                 sizeof settings->server_flags);
  if (settings->timeout)
    attribute_put (&request, NBD_ATTR_TIMEOUT, &settings->timeout,
                   sizeof settings->timeout);
  sockets = attribute_begin (&request, NBD_ATTR_SOCKETS);
  for (unsigned i = 0; i < n_fds; i++) {
    struct nlattr *item = attribute_begin (&request, NBD_SOCK_ITEM);
    uint32_t fd = fds[i];

    attribute_put (&request, NBD_SOCK_FD, &fd, sizeof fd);
    attribute_end (&request, item);
  }
  attribute_end (&request, sockets);
  error = transact (sock, &request, NULL);
  if (error)
    fprintf (stderr, "cswap-connect: NBD_CMD_CONNECT /dev/nbd%u: %s (see dmesg)\n",
             settings->index, strerror (-error));
 out:
  close (sock);
  return family < 0 || error ? -1 : 0;
}
