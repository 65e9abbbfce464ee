/* cswap: the FUSE file system cswap-fuse serves — one regular file.
 *
 * The mount holds a root directory with a single file, "swap", whose
 * bytes are the store's device: `losetup --direct-io=on MOUNT/swap` makes
 * it a block device for mkswap and swapon.  Nothing can be created,
 * renamed, removed or resized; discards arrive as
 * fallocate(PUNCH_HOLE|KEEP_SIZE) and free the store's pages.
 */
#ifndef CSWAP_FUSE_OPS_H
#define CSWAP_FUSE_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <sys/types.h>

#include "store.h"

/* The session's userdata: what every request needs.  Set before the
 * session starts and never changed while it runs.
 */
struct fuse_device {
  struct store *store;
  uid_t owner_uid;              /* the file and the root belong to the */
  gid_t owner_gid;              /* user who mounted them */
  struct timespec mount_time;   /* reported as every time stamp */
};

extern const struct fuse_lowlevel_ops fuse_device_ops;

#endif /* CSWAP_FUSE_OPS_H */
