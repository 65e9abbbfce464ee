/* cswap: the file MOUNT/swap's rules, free of any transport (device.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "device.h"

const struct device_dir_entry device_dir_entries[] = {
  { ".", DEVICE_ROOT_INO, S_IFDIR },
  { "..", DEVICE_ROOT_INO, S_IFDIR },
  { DEVICE_SWAP_NAME, DEVICE_SWAP_INO, S_IFREG },
};
const size_t device_dir_entry_count
  = sizeof device_dir_entries / sizeof device_dir_entries[0];

void
device_attr (const struct device *device, uint64_t ino, struct stat *st)
{
  *st = (struct stat) {
    .st_ino = ino,
    .st_uid = device->owner_uid,
    .st_gid = device->owner_gid,
    .st_blksize = CSWAP_PAGE_SIZE,
    .st_atim = device->mount_time,
    .st_mtim = device->mount_time,
    .st_ctim = device->mount_time,
  };
  if (ino == DEVICE_ROOT_INO) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  }
  else {
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_size = device->blockdev.size_bytes;
    /* Like a sparse file: only the pages that hold data count. */
    st->st_blocks = store_pages_stored (device->blockdev.store)
                    * (CSWAP_PAGE_SIZE / 512);
  }
}

int64_t
device_lookup (uint64_t parent, const char *name)
{
  if (parent != DEVICE_ROOT_INO || strcmp (name, DEVICE_SWAP_NAME) != 0)
    return -ENOENT;
  return DEVICE_SWAP_INO;
}

int
device_setattr (const struct device *device, uint64_t ino,
                const struct device_attr_change *change)
{
  struct stat st;

  device_attr (device, ino, &st);
  if ((change->size && change->to.st_size != st.st_size)
      || (change->mode && change->to.st_mode != st.st_mode)
      || (change->uid && change->to.st_uid != st.st_uid)
      || (change->gid && change->to.st_gid != st.st_gid))
    return -EPERM;
  return 0;
}

int
device_open (uint64_t ino, int flags)
{
  if (ino != DEVICE_SWAP_INO)
    return -EISDIR;
  if (flags & O_TRUNC)
    return -EPERM;
  return 0;
}

/* A loop device passes discards as PUNCH_HOLE|KEEP_SIZE and write-zeroes
 * as ZERO_RANGE: both free the store's pages at once.  Ranges are clipped
 * to the end of the device unless zeroing without KEEP_SIZE would grow the
 * file, which it cannot.  Allocating modes have nothing to allocate in
 * advance and are not supported.
 */
int
device_fallocate (const struct device *device, int mode, uint64_t offset,
                  uint64_t length)
{
  switch (mode) {
  case FALLOC_FL_ZERO_RANGE:
    if (offset + length > device->blockdev.size_bytes)
      return -EFBIG;
    break;
  case FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE:
  case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE:
    break;
  default:
    return -EOPNOTSUPP;
  }
  return blockdev_zero (&device->blockdev, length, offset);
}

void
device_statfs (const struct device *device, struct statvfs *sv)
{
  uint64_t device_pages = device->blockdev.size_bytes / CSWAP_PAGE_SIZE;
  uint64_t pages_stored = store_pages_stored (device->blockdev.store);

  /* f_bsize is also the discard granularity a loop device takes. */
  *sv = (struct statvfs) {
    .f_bsize = CSWAP_PAGE_SIZE,
    .f_frsize = CSWAP_PAGE_SIZE,
    .f_blocks = device_pages,
    .f_bfree = device_pages - pages_stored,
    .f_bavail = device_pages - pages_stored,
    .f_files = 2,
    .f_namemax = sizeof DEVICE_SWAP_NAME - 1,
  };
}
