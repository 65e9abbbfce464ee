/* cswap: remote/nbd-netlink.h — connecting a /dev/nbdN to sockets the
 * client negotiated, through the nbd driver's generic netlink family;
 * hearing when one of them dies, and giving it a new one.  Every
 * function prints what went wrong to stderr.
 */
#ifndef CSWAP_NBD_NETLINK_H
#define CSWAP_NBD_NETLINK_H

#include <stdint.h>

struct nbd_device_settings {
  unsigned index;               /* N of /dev/nbdN */
  uint64_t size, block_size;
  uint64_t server_flags;        /* NBD_OPT_GO's transmission flags */
  uint64_t timeout;             /* seconds per request; 0: the driver's */
  uint64_t dead_conn_timeout;   /* seconds a request waits for a socket
                                   to replace a dead one; 0: none */
};

/* The most sockets one device is connected with here. */
#define NBD_NETLINK_MAX_SOCKETS 16

/* NBD_CMD_CONNECT: the device served by the N_FDS sockets FDS (1 to
 * NBD_NETLINK_MAX_SOCKETS).  The kernel takes its own reference to each.
 * -1 after printing why.
 */
extern int nbd_netlink_connect (const struct nbd_device_settings *settings,
                                const int *fds, unsigned n_fds);

/* NBD_CMD_RECONFIGURE: FD, negotiated to the same export, replaces a dead
 * socket of /dev/nbd<INDEX> (none dead: the kernel ignores it).  0 or -1.
 */
extern int nbd_netlink_reconfigure (unsigned index, int fd);

/* NBD_CMD_DISCONNECT of /dev/nbd<INDEX>: its requests fail from now on. */
extern int nbd_netlink_disconnect (unsigned index);

/* A socket in the driver's multicast group, where it announces
 * NBD_CMD_LINK_DEAD, or -1.
 */
extern int nbd_netlink_watch (void);

/* Waits up to TIMEOUT_MS for a notice on WATCH: 1 if /dev/nbd<INDEX> lost
 * a socket (or notices were lost, which may have said so), 0 if not,
 * -1 on an error (errno set).
 */
extern int nbd_netlink_link_dead (int watch, unsigned index, int timeout_ms);

#endif
