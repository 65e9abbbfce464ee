/* cswap: remote/link-watch.h — cswap-connect --persist: stays beside the
 * device it connected, and when the driver says one of its connections
 * died (NBD_CMD_LINK_DEAD), negotiates a new one to the same export and
 * hands it over (NBD_CMD_RECONFIGURE), while the driver holds the
 * device's requests for up to the dead-connection timeout.
 *
 * Only to the same contents: a cswap server names its export's contents
 * (contents-id.h).  A server that restarted, or dropped the export, has
 * lost the pages the device left there, and would read them back as
 * zeros: swapped-in memory silently wrong.  Then the device is
 * disconnected instead, so that its reads fail (EIO, as from a dead
 * disk) at once rather than after a wait each.
 */
#ifndef CSWAP_LINK_WATCH_H
#define CSWAP_LINK_WATCH_H

#include "nbd-channel.h"
#include "remote-negotiate.h"

struct link_watch {
  const struct remote_target *target;
  unsigned index;               /* N of /dev/nbdN */
  struct nbd_export_info export;        /* what the device was connected to */
  int watch;                    /* nbd_netlink_watch's socket */
};

/* Keeps this process out of the reclaim the device serves (memory locked,
 * an I/O flusher, spared by the OOM killer), warning about what it
 * cannot do.  Call it before watching.
 */
extern void link_watch_protect (void);

/* Watches and heals until the device is no longer this process's (it was
 * disconnected): 0; or 1 after disconnecting it because its export's
 * contents changed.
 */
extern int link_watch_run (const struct link_watch *watch);

#endif
