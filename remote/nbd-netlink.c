/* cswap: remote/nbd-netlink.c — the nbd driver's generic netlink family
 * with the kernel's own headers and no library: NBD_CMD_CONNECT as
 * nbd-client does it (its netlink_configure), NBD_CMD_RECONFIGURE and
 * NBD_CMD_DISCONNECT, each a request the kernel acknowledges, and the
 * family's multicast group, where the driver says NBD_CMD_LINK_DEAD.
 */
#include <assert.h>
#include <errno.h>
#include <poll.h>
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

/* The attributes from START, LEN bytes: attribute_ok says whether A
 * (with *REMAINING bytes from it) is a whole one, attribute_next steps.
 */
static bool
attribute_ok (const struct nlattr *a, int remaining)
{
  return remaining >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN
    && a->nla_len <= remaining;
}

static const struct nlattr *
attribute_next (const struct nlattr *a, int *remaining)
{
  *remaining -= NLA_ALIGN (a->nla_len);
  return (const struct nlattr *) ((const char *) a + NLA_ALIGN (a->nla_len));
}

static const void *
attribute_data (const struct nlattr *a)
{
  return (const char *) a + NLA_HDRLEN;
}

/* The attribute TYPE among LEN bytes of them from START, or NULL. */
static const struct nlattr *
attribute_find (const void *start, int len, uint16_t type)
{
  const struct nlattr *a = start;

  for (; attribute_ok (a, len); a = attribute_next (a, &len))
    if ((a->nla_type & NLA_TYPE_MASK) == type)
      return a;
  return NULL;
}

/* A generic netlink message's attributes: where they start, how long. */
static const void *
message_attributes (const struct nlmsghdr *header, int *len)
{
  *len = header->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
  return (const char *) NLMSG_DATA (header) + GENL_HDRLEN;
}

/* The id of the multicast group NBD_GENL_MCAST_GROUP_NAME among a family
 * reply's CTRL_ATTR_MCAST_GROUPS, or 0.
 */
static uint32_t
multicast_group (const struct nlattr *groups)
{
  int len = groups->nla_len - NLA_HDRLEN;
  const struct nlattr *group = attribute_data (groups);

  for (; attribute_ok (group, len); group = attribute_next (group, &len)) {
    int group_len = group->nla_len - NLA_HDRLEN;
    const struct nlattr *name = attribute_find (attribute_data (group), group_len,
                                                CTRL_ATTR_MCAST_GRP_NAME);
    const struct nlattr *id = attribute_find (attribute_data (group), group_len,
                                              CTRL_ATTR_MCAST_GRP_ID);
    uint32_t value;

    if (name && id && strcmp (attribute_data (name), NBD_GENL_MCAST_GROUP_NAME) == 0) {
      memcpy (&value, attribute_data (id), sizeof value);
      return value;
    }
  }
  return 0;
}

/* The generic netlink family id of "nbd", or -1 (the module not loaded);
 * and its multicast group's into *GROUP if GROUP is not NULL (0: none).
 */
static int
nbd_family (int sock, uint32_t *group)
{
  struct message request, reply;
  const struct nlattr *family, *groups;
  const void *attributes;
  int len, error;
  uint16_t id;

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
  attributes = message_attributes (&reply.header, &len);
  family = attribute_find (attributes, len, CTRL_ATTR_FAMILY_ID);
  if (family == NULL) {
    fprintf (stderr, "cswap-connect: generic netlink: no id for family %s\n",
             NBD_GENL_FAMILY_NAME);
    return -1;
  }
  if (group) {
    groups = attribute_find (attributes, len, CTRL_ATTR_MCAST_GROUPS);
    *group = groups ? multicast_group (groups) : 0;
  }
  memcpy (&id, attribute_data (family), sizeof id);
  return id;
}

/* A generic netlink socket and the nbd family's id on it, or -1. */
static int
nbd_socket (int *family, uint32_t *group)
{
  int sock = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

  if (sock < 0) {
    perror ("cswap-connect: netlink socket");
    return -1;
  }
  *family = nbd_family (sock, group);
  if (*family < 0) {
    close (sock);
    return -1;
  }
  return sock;
}

/* Sends REQUEST on a socket of its own: 0, or -1 after saying why. */
static int
nbd_request (struct message *request, const char *what, unsigned index)
{
  int family, error;
  int sock = nbd_socket (&family, NULL);

  if (sock < 0)
    return -1;
  request->header.nlmsg_type = family;
  error = transact (sock, request, NULL);
  close (sock);
  if (error) {
    fprintf (stderr, "cswap-connect: %s /dev/nbd%u: %s (see dmesg)\n",
             what, index, strerror (-error));
    return -1;
  }
  return 0;
}

/* NBD_ATTR_SOCKETS with the N_FDS sockets FDS. */
static void
put_sockets (struct message *request, const int *fds, unsigned n_fds)
{
  struct nlattr *sockets = attribute_begin (request, NBD_ATTR_SOCKETS);

  for (unsigned i = 0; i < n_fds; i++) {
    struct nlattr *item = attribute_begin (request, NBD_SOCK_ITEM);
    uint32_t fd = fds[i];

    attribute_put (request, NBD_SOCK_FD, &fd, sizeof fd);
    attribute_end (request, item);
  }
  attribute_end (request, sockets);
}

int
nbd_netlink_connect (const struct nbd_device_settings *settings,
                     const int *fds, unsigned n_fds)
{
  struct message request;
  uint32_t index = settings->index;

  assert (n_fds >= 1 && n_fds <= NBD_NETLINK_MAX_SOCKETS);
  message_init (&request, 0, NBD_CMD_CONNECT, NBD_GENL_VERSION);
  attribute_put (&request, NBD_ATTR_INDEX, &index, sizeof index);
  attribute_put (&request, NBD_ATTR_SIZE_BYTES, &settings->size, sizeof settings->size);
  attribute_put (&request, NBD_ATTR_BLOCK_SIZE_BYTES, &settings->block_size,
                 sizeof settings->block_size);
  attribute_put (&request, NBD_ATTR_SERVER_FLAGS, &settings->server_flags,
                 sizeof settings->server_flags);
  if (settings->timeout)
    attribute_put (&request, NBD_ATTR_TIMEOUT, &settings->timeout,
                   sizeof settings->timeout);
  if (settings->dead_conn_timeout)
    attribute_put (&request, NBD_ATTR_DEAD_CONN_TIMEOUT,
                   &settings->dead_conn_timeout, sizeof settings->dead_conn_timeout);
  put_sockets (&request, fds, n_fds);
  return nbd_request (&request, "NBD_CMD_CONNECT", index);
}

int
nbd_netlink_reconfigure (unsigned index, int fd)
{
  struct message request;
  uint32_t index32 = index;

  message_init (&request, 0, NBD_CMD_RECONFIGURE, NBD_GENL_VERSION);
  attribute_put (&request, NBD_ATTR_INDEX, &index32, sizeof index32);
  put_sockets (&request, &fd, 1);
  return nbd_request (&request, "NBD_CMD_RECONFIGURE", index);
}

int
nbd_netlink_disconnect (unsigned index)
{
  struct message request;
  uint32_t index32 = index;

  message_init (&request, 0, NBD_CMD_DISCONNECT, NBD_GENL_VERSION);
  attribute_put (&request, NBD_ATTR_INDEX, &index32, sizeof index32);
  return nbd_request (&request, "NBD_CMD_DISCONNECT", index);
}

int
nbd_netlink_watch (void)
{
  int family;
  uint32_t group;
  int sock = nbd_socket (&family, &group);

  if (sock < 0)
    return -1;
  if (group == 0) {
    fprintf (stderr, "cswap-connect: generic netlink family %s has no group %s\n",
             NBD_GENL_FAMILY_NAME, NBD_GENL_MCAST_GROUP_NAME);
    close (sock);
    return -1;
  }
  if (setsockopt (sock, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group)) {
    perror ("cswap-connect: joining the nbd driver's multicast group");
    close (sock);
    return -1;
  }
  return sock;
}

int
nbd_netlink_link_dead (int watch, unsigned index, int timeout_ms)
{
  char buffer[8192] __attribute__ ((aligned (NLMSG_ALIGNTO)));
  struct pollfd p = { .fd = watch, .events = POLLIN };
  struct nlmsghdr *header;
  ssize_t n;
  int found = 0;

  n = poll (&p, 1, timeout_ms);
  if (n <= 0)
    return n < 0 && errno != EINTR ? -1 : 0;
  n = recv (watch, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n < 0)
    /* ENOBUFS: notices were lost; one of them may have been ours. */
    return errno == ENOBUFS ? 1 : errno == EAGAIN || errno == EINTR ? 0 : -1;
  for (header = (struct nlmsghdr *) buffer; NLMSG_OK (header, (size_t) n);
       header = NLMSG_NEXT (header, n)) {
    const struct genlmsghdr *genl = NLMSG_DATA (header);
    const struct nlattr *attribute;
    const void *attributes;
    uint32_t dead;
    int len;

    if (header->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN
        || genl->cmd != NBD_CMD_LINK_DEAD)
      continue;
    attributes = message_attributes (header, &len);
    attribute = attribute_find (attributes, len, NBD_ATTR_INDEX);
    if (attribute && attribute->nla_len >= NLA_HDRLEN + sizeof dead) {
      memcpy (&dead, attribute_data (attribute), sizeof dead);
      found |= dead == index;
    }
  }
  return found;
}
