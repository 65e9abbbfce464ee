/* cswap: remote/nbd-netlink.h — connecting a /dev/nbdN to sockets the
 * client negotiated, through the nbd driver's generic netlink family.
 */
#ifndef CSWAP_NBD_NETLINK_H
#define CSWAP_NBD_NETLINK_H

#include <stdint.h>

struct nbd_device_settings {
  unsigned index;               /* N of /dev/nbdN */
  uint64_t size, block_size;
  uint64_t server_flags;        /* NBD_OPT_GO's transmission flags */
  uint64_t timeout;             /* seconds per request; 0: the driver's */
};

/* The most sockets one device is connected with here. */
#define NBD_NETLINK_MAX_SOCKETS 16

/* NBD_CMD_CONNECT: the device served by the N_FDS sockets FDS (1 to
 * NBD_NETLINK_MAX_SOCKETS).  The kernel takes its own reference to each.
 * -1 after printing why.
 */
extern int nbd_netlink_connect (const struct nbd_device_settings *settings,
                                const int *fds, unsigned n_fds);

#endif
