/* cswap: what the file MOUNT/swap is, whatever carries the requests.
 *
 * The mount holds a root directory with a single file, "swap", whose
 * bytes are the store's device: `losetup --direct-io=on MOUNT/swap` makes
 * it a block device for mkswap and swapon.  Nothing can be created,
 * renamed, removed or resized (EPERM); a write that starts at or past the
 * end fails with EFBIG; discards arrive as fallocate(PUNCH_HOLE|KEEP_SIZE)
 * and free the store's pages; allocating fallocate modes are EOPNOTSUPP.
 *
 * This is the one place those rules live.  Two adapters speak FUSE on
 * top of it: fuse-ops.c through libfuse (the classic transport) and
 * fuse-raw-dispatch.c on raw FUSE messages (io_uring and its read/write
 * fallback).  Their reads and writes go straight to the request layer
 * every front end shares (blockdev.h: the range, the timing, the full
 * warning and the ladder's note); what is the file's own is here: the
 * inodes, the attributes and fallocate's modes.  Every function returns
 * a result or a negative errno and never replies itself.
 *
 * Locking: none.  The name space and attributes are constant, so requests
 * on any number of threads share only the request layer, which is
 * thread-safe (blockdev.h).
 */
#ifndef CSWAP_DEVICE_H
#define CSWAP_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "blockdev.h"
#include "page.h"

#define DEVICE_ROOT_INO 1       /* FUSE_ROOT_ID */
#define DEVICE_SWAP_INO 2
#define DEVICE_SWAP_NAME "swap"

/* The name never changes: the kernel may cache it for as long as it likes.
 * The attributes are constant too, except st_blocks (the pages stored),
 * which is worth seeing fresh in `du`.
 */
#define DEVICE_ENTRY_TIMEOUT_S 86400
#define DEVICE_ATTR_TIMEOUT_S 1

/* What every request needs.  Set before serving starts and never changed
 * while it runs.
 */
struct device {
  struct blockdev blockdev;     /* the whole store */
  uid_t owner_uid;              /* the file and the root belong to the */
  gid_t owner_gid;              /* user who mounted them */
  struct timespec mount_time;   /* reported as every time stamp */
};

/* Attributes of INO (the root or the file; any other number is taken as
 * the file, as the kernel only asks about inodes it looked up).
 */
extern void device_attr (const struct device *device, uint64_t ino,
                         struct stat *st);

/* The inode NAME in PARENT names, or -ENOENT. */
extern int64_t device_lookup (uint64_t parent, const char *name);

/* Which attribute changes setattr asks for. */
struct device_attr_change {
  bool size, mode, uid, gid;
  struct stat to;
};

/* 0 if the change leaves INO as it is (time stamps are ignored, so that
 * touch works), -EPERM otherwise.
 */
extern int device_setattr (const struct device *device, uint64_t ino,
                           const struct device_attr_change *change);

/* 0 if INO may be opened with open(2) FLAGS, else -EISDIR or -EPERM
 * (O_TRUNC: the size is the device's).  An open file is always direct I/O
 * (no page-cache copy of swapped pages: it would be uncompressed), keeps
 * no cache, needs no flush, and takes writes in parallel (the store locks
 * per page).
 */
extern int device_open (uint64_t ino, int flags);

/* The directory's entries, in order; readdir offsets are index + 1. */
struct device_dir_entry {
  const char *name;
  uint64_t ino;
  mode_t type;
};
extern const struct device_dir_entry device_dir_entries[];
extern const size_t device_dir_entry_count;

/* Reads and writes: blockdev_read and blockdev_write on &device->blockdev
 * (short at the end; a write at or past it is -EFBIG).
 */

/* fallocate(2) MODE over the range: 0 or a negative errno. */
extern int device_fallocate (const struct device *device, int mode,
                             uint64_t offset, uint64_t length);

extern void device_statfs (const struct device *device, struct statvfs *sv);

#endif /* CSWAP_DEVICE_H */
