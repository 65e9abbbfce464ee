/* cswap: a ladder step — the device `ladder add` names, checked to be
 * this daemon's window (a direct-I/O loop device over its file at
 * exactly that window, or for the nbdkit plugin, which has no file, a
 * device of the window's length whose swap header is the window's), then
 * held open as the step for as long as the daemon may swap it on
 * (ladder-follow.h: why a step is its descriptor, never its name).
 *
 * Run by the control thread (and ladder_resume) under ladder->lock, while
 * no follower runs; the follower's own cheap re-checks before each
 * swapon and swapoff are ladder-thread.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "ladder-internal.h"
#include "page.h"

/* Whether FD, a loop device, is this daemon's file at exactly the window
 * OFFSET, LENGTH with direct I/O (S's backing_dev and backing_inode set
 * to that file's, for the follower's re-checks); if not, the reason in
 * ERROR.
 */
static int
check_loop_window (struct ladder *l, struct ladder_step *s, int fd,
                   const char *device, uint64_t offset, uint64_t length,
                   char *error, size_t size)
{
  struct loop_info64 info;
  struct stat file;

  if (ioctl (fd, LOOP_GET_STATUS64, &info) == -1)
    return refuse (error, size, "%s: not an attached loop device (%s)",
                   device, strerrordesc_np (errno));
  if (stat (l->swap_file, &file) == -1)
    return refuse (error, size, "%s: %s", l->swap_file,
                   strerrordesc_np (errno));
  if (info.lo_device != file.st_dev || info.lo_inode != file.st_ino)
    return refuse (error, size, "%s: not a loop device over %s", device,
                   l->swap_file);
  if (info.lo_offset != offset || info.lo_sizelimit != length)
    return refuse (error, size, "%s: covers %llu bytes from %llu of the "
                   "file, not %llu from %llu", device,
                   (unsigned long long) info.lo_sizelimit,
                   (unsigned long long) info.lo_offset,
                   (unsigned long long) length, (unsigned long long) offset);
  if (!(info.lo_flags & LO_FLAGS_DIRECT_IO))
    return refuse (error, size, "%s: direct I/O is off (a buffered loop "
                   "keeps a copy of every page)", device);
  s->backing_dev = info.lo_device;
  s->backing_inode = info.lo_inode;
  return 0;
}

/* Whether DEVICE (open as FD) is a device of LENGTH bytes whose first
 * page reads, uncached, as the store's page at OFFSET, and that page a
 * swap header: mkswap gives each one a random UUID, so only the device
 * this daemon serves that window through reads so.  How the nbdkit
 * plugin's windows (nbd-window.h), which no file names, are known.
 */
static int
check_served_window (struct ladder *l, int fd, const char *device,
                     uint64_t offset, uint64_t length, char *error,
                     size_t size)
{
  static const char magic[] = "SWAPSPACE2";
  const size_t magic_at = CSWAP_PAGE_SIZE - (sizeof magic - 1);
  CLEANUP_FREE unsigned char *ours = aligned_alloc (CSWAP_PAGE_SIZE,
                                                    2 * CSWAP_PAGE_SIZE);
  unsigned char *theirs = ours + CSWAP_PAGE_SIZE;
  uint64_t bytes;
  ssize_t r;
  int direct, err;
  char path[FD_PATH_BYTES];

  if (ours == NULL)
    return refuse (error, size, "out of memory");
  if (ioctl (fd, BLKGETSIZE64, &bytes) == -1)
    return refuse (error, size, "%s: %s", device, strerrordesc_np (errno));
  if (bytes != length)
    return refuse (error, size, "%s: %llu bytes, not the window's %llu",
                   device, (unsigned long long) bytes,
                   (unsigned long long) length);
  err = store_read (l->store, ours, CSWAP_PAGE_SIZE, offset);
  if (err)
    return refuse (error, size, "reading the window's header: %s",
                   strerrordesc_np (-err));
  if (memcmp (ours + magic_at, magic, sizeof magic - 1))
    return refuse (error, size, "the window at %llu holds no swap header "
                   "(mkswap its device first)", (unsigned long long) offset);
  /* Through FD, not DEVICE's name: the name may point elsewhere now. */
  fd_path (fd, path);
  direct = open (path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (direct == -1)
    return refuse (error, size, "%s: %s", device, strerrordesc_np (errno));
  r = pread (direct, theirs, CSWAP_PAGE_SIZE, 0);
  err = errno;
  close (direct);
  if (r != (ssize_t) CSWAP_PAGE_SIZE)
    return refuse (error, size, "%s: reading its first page: %s", device,
                   r == -1 ? strerrordesc_np (err) : "short read");
  if (memcmp (ours, theirs, CSWAP_PAGE_SIZE))
    return refuse (error, size, "%s: its swap header is not the one of this "
                   "daemon's window at %llu", device,
                   (unsigned long long) offset);
  return 0;
}

int
ladder_add_checked_step (struct ladder *l, const char *device,
                         uint64_t offset, uint64_t length, int priority,
                         char *error, size_t size)
{
  struct ladder_step *s = &l->steps[l->count];
  uint64_t next = 0;
  struct stat st;
  char path[FD_PATH_BYTES];
  ssize_t name_bytes;
  int fd;

  if (l->count == LADDER_MAX_STEPS)
    return refuse (error, size, "at most %d steps", LADDER_MAX_STEPS);
  if (l->count)
    next = l->steps[l->count - 1].offset_bytes
      + l->steps[l->count - 1].length_bytes;
  if (offset != next || length % CSWAP_PAGE_SIZE
      || offset > store_size (l->store)
      || length > store_size (l->store) - offset)
    return refuse (error, size, "ladder add: the window %llu+%llu does not "
                   "follow the last step (%llu) in whole pages within the "
                   "device", (unsigned long long) offset,
                   (unsigned long long) length, (unsigned long long) next);
  /* O_NONBLOCK: a FIFO named here must not hold the control thread. */
  fd = open (device, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd == -1)
    return refuse (error, size, "%s: %s", device, strerrordesc_np (errno));
  if (fstat (fd, &st) == -1 || !S_ISBLK (st.st_mode)) {
    close (fd);
    return refuse (error, size, "%s: not a block device", device);
  }
  /* What the step is shown as: the name the kernel opened, symbolic
   * links resolved, as /proc/swaps will show it.
   */
  fd_path (fd, path);
  name_bytes = readlink (path, s->device, sizeof s->device);
  if (name_bytes <= 0 || (size_t) name_bytes >= sizeof s->device) {
    close (fd);
    return refuse (error, size, "%s: its name is too long (or unknown)",
                   device);
  }
  s->device[name_bytes] = '\0';
  for (unsigned i = 0; i < l->count; i++)
    if (l->steps[i].rdev == st.st_rdev) {
      close (fd);
      return refuse (error, size, "%s: already step %u", device, i);
    }
  if ((l->swap_file[0]
       ? check_loop_window (l, s, fd, device, offset, length, error, size)
       : check_served_window (l, fd, device, offset, length, error, size))
      == -1) {
    close (fd);
    return -1;
  }
  s->fd = fd;
  s->rdev = st.st_rdev;
  s->offset_bytes = offset;
  s->length_bytes = length;
  s->priority = priority;
  atomic_store (&s->rest_until_ns, 0);
  l->count++;
  return 0;
}

void
ladder_forget_steps (struct ladder *l)
{
  for (unsigned i = 0; i < l->count; i++)
    close (l->steps[i].fd);
  l->count = 0;
}
