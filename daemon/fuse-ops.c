/* cswap: the FUSE low-level operations behind MOUNT/swap (see fuse-ops.h).
 *
 * Two inodes that never change: the root directory (FUSE_ROOT_ID) and the
 * file SWAP_INO, whose size is the device's.  Reads and writes go straight
 * to the store; open sets direct_io so the kernel keeps no page-cache copy
 * of swapped pages (that copy would be uncompressed and defeat the point),
 * and the connection has no writeback cache and no readahead.
 *
 * Locking: none here.  The name space and the attributes are constant, so
 * requests running on different worker threads share only the store, which
 * is thread-safe and locks per page.  Each worker thread reads into a
 * buffer of its own (thread-specific data, freed when the thread exits).
 *
 * Everything that would change the name space or the size is refused
 * with EPERM: the file is a device, not a place to keep files.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/param.h>

#include "fuse-ops.h"
#include "full-warning.h"
#include "memory-safety.h"
#include "monotonic.h"
#include "page.h"

#define SWAP_INO 2
#define SWAP_NAME "swap"

/* The kernel caps one request at 256 pages; asking for that keeps the
 * number of round trips for large swap-outs down.
 */
#define MAX_WRITE_BYTES (256 * CSWAP_PAGE_SIZE)

/* The name never changes: the kernel may cache it for as long as it likes.
 * The attributes are constant too, except st_blocks (the pages stored),
 * which is worth seeing fresh in `du`.
 */
#define ENTRY_TIMEOUT_S 86400.0
#define ATTR_TIMEOUT_S 1.0

static struct fuse_device *
request_device (fuse_req_t req)
{
  return fuse_req_userdata (req);
}

static void
fill_attr (struct fuse_device *device, fuse_ino_t ino, struct stat *st)
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
  if (ino == FUSE_ROOT_ID) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  }
  else {
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_size = store_size (device->store);
    /* Like a sparse file: only the pages that hold data count. */
    st->st_blocks = store_pages_stored (device->store) * (CSWAP_PAGE_SIZE / 512);
  }
}

static void
device_init (void *userdata, struct fuse_conn_info *conn)
{
  (void) userdata;
  conn->max_write = MAX_WRITE_BYTES;
  /* Reading ahead on swap reads pages nobody asked for; the kernel's swap
   * readahead already decides what to bring in.
   */
  conn->max_readahead = 0;
  /* Several reads of one file in flight at once, and a loop device's
   * asynchronous direct I/O stays asynchronous through FUSE.
   */
  conn->want |= conn->capable & (FUSE_CAP_ASYNC_READ | FUSE_CAP_ASYNC_DIO);
  /* The loop device's direct I/O arrives as background requests, of which
   * the kernel keeps max_background in flight.  Raising it from the
   * kernel's 12 to 64, 128 or 512 made no measurable difference to a
   * Python program swapping through cswap-fuse, so it is left alone.
   */
  /* A writeback cache would keep swapped pages uncompressed in the page
   * cache; splicing costs more than a copy for 4 KiB requests.
   */
  conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ
                  | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
}

static void
device_lookup (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  struct fuse_entry_param entry = {
    .ino = SWAP_INO,
    .attr_timeout = ATTR_TIMEOUT_S,
    .entry_timeout = ENTRY_TIMEOUT_S,
  };

  if (parent != FUSE_ROOT_ID || strcmp (name, SWAP_NAME) != 0) {
    fuse_reply_err (req, ENOENT);
    return;
  }
  fill_attr (request_device (req), SWAP_INO, &entry.attr);
  fuse_reply_entry (req, &entry);
}

static void
device_getattr (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  struct stat st;

  (void) fi;
  fill_attr (request_device (req), ino, &st);
  fuse_reply_attr (req, &st, ATTR_TIMEOUT_S);
}

/* The size is the device's and the mode and owner are fixed: only a
 * "change" to what they already are, and time stamps (ignored, so that
 * touch works), are accepted.
 */
static void
device_setattr (fuse_req_t req, fuse_ino_t ino, struct stat *attr,
                int to_set, struct fuse_file_info *fi)
{
  struct fuse_device *device = request_device (req);
  struct stat st;

  (void) fi;
  fill_attr (device, ino, &st);
  if ((to_set & FUSE_SET_ATTR_SIZE && attr->st_size != st.st_size)
      || (to_set & FUSE_SET_ATTR_MODE && attr->st_mode != st.st_mode)
      || (to_set & FUSE_SET_ATTR_UID && attr->st_uid != st.st_uid)
      || (to_set & FUSE_SET_ATTR_GID && attr->st_gid != st.st_gid)) {
    fuse_reply_err (req, EPERM);
    return;
  }
  fuse_reply_attr (req, &st, ATTR_TIMEOUT_S);
}

static void
device_open (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  if (ino != SWAP_INO) {
    fuse_reply_err (req, EISDIR);
    return;
  }
  if (fi->flags & O_TRUNC) {    /* the size is the device's */
    fuse_reply_err (req, EPERM);
    return;
  }
  fi->direct_io = 1;
  fi->keep_cache = 0;
  fi->noflush = 1;              /* nothing to do on close */
#if FUSE_VERSION >= FUSE_MAKE_VERSION (3, 15)
  /* The store locks per page: writes need not queue on the inode lock. */
  fi->parallel_direct_writes = 1;
#endif
  fuse_reply_open (req, fi);
}

static void
device_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
                struct fuse_file_info *fi)
{
  static const struct {
    const char *name;
    fuse_ino_t ino;
    mode_t type;
  } entries[] = {
    { ".", FUSE_ROOT_ID, S_IFDIR },
    { "..", FUSE_ROOT_ID, S_IFDIR },
    { SWAP_NAME, SWAP_INO, S_IFREG },
  };
  char buf[256];                /* room for all three entries */
  size_t room = MIN (size, sizeof buf), used = 0;

  (void) ino;
  (void) fi;
  for (size_t i = offset; i < sizeof entries / sizeof entries[0]; i++) {
    struct stat st = { .st_ino = entries[i].ino, .st_mode = entries[i].type };
    size_t len = fuse_add_direntry (req, buf + used, room - used,
                                    entries[i].name, &st, i + 1);

    if (len > room - used)
      break;
    used += len;
  }
  fuse_reply_buf (req, buf, used);
}

/* The calling worker thread's read buffer, grown to at least SIZE bytes.
 * Requests are at most max_write (256 pages), so after its first few reads
 * a thread no longer allocates.  Returns NULL when out of memory.
 */
struct read_buffer {
  size_t capacity;
  unsigned char data[];
};

static pthread_key_t read_buffer_key;
static pthread_once_t read_buffer_key_once = PTHREAD_ONCE_INIT;

static void
create_read_buffer_key (void)
{
  if (pthread_key_create (&read_buffer_key, free) != 0)
    abort ();                   /* only when the process is out of keys */
}

static void *
thread_read_buffer (size_t size)
{
  struct read_buffer *buffer;

  pthread_once (&read_buffer_key_once, create_read_buffer_key);
  buffer = pthread_getspecific (read_buffer_key);
  if (buffer == NULL || buffer->capacity < size) {
    free (buffer);
    pthread_setspecific (read_buffer_key, NULL);
    buffer = malloc (sizeof *buffer + size);
    if (buffer == NULL)
      return NULL;
    buffer->capacity = size;
    pthread_setspecific (read_buffer_key, buffer);
  }
  return buffer->data;
}

/* A read past the end is short, as for any file. */
static void
serve_read (fuse_req_t req, struct store *store, size_t size, off_t offset)
{
  uint64_t device_bytes = store_size (store);
  void *buf;
  int r;

  if ((uint64_t) offset >= device_bytes) {
    fuse_reply_buf (req, NULL, 0);
    return;
  }
  size = MIN (size, device_bytes - offset);
  buf = thread_read_buffer (size);
  if (buf == NULL) {
    fuse_reply_err (req, ENOMEM);
    return;
  }
  r = store_read (store, buf, size, offset);
  if (r < 0)
    fuse_reply_err (req, -r);
  else
    fuse_reply_buf (req, buf, size);
}

static void
device_read (fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
             struct fuse_file_info *fi)
{
  uint64_t start_ns = monotonic_ns ();
  struct store *store = request_device (req)->store;

  (void) ino;
  (void) fi;
  memory_safety_mark_io_thread ();
  serve_read (req, store, size, offset);
  store_note_request (store, STORE_REQUEST_READ, monotonic_ns () - start_ns);
}

/* The file cannot grow: a write that crosses the end is short, one that
 * starts at or past it fails with EFBIG ("File too large"), distinct from
 * the ENOSPC the store returns when its pool is full.
 */
static void
serve_write (fuse_req_t req, struct store *store, const char *buf,
             size_t size, off_t offset)
{
  uint64_t device_bytes = store_size (store);
  int r;

  if ((uint64_t) offset >= device_bytes) {
    fuse_reply_err (req, EFBIG);
    return;
  }
  size = MIN (size, device_bytes - offset);
  r = store_write (store, buf, size, offset);
  full_warning_note (store, r);
  if (r < 0)
    fuse_reply_err (req, -r);
  else
    fuse_reply_write (req, size);
}

static void
device_write (fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
              off_t offset, struct fuse_file_info *fi)
{
  uint64_t start_ns = monotonic_ns ();
  struct store *store = request_device (req)->store;

  (void) ino;
  (void) fi;
  memory_safety_mark_io_thread ();
  serve_write (req, store, buf, size, offset);
  store_note_request (store, STORE_REQUEST_WRITE, monotonic_ns () - start_ns);
}

/* A loop device passes discards as PUNCH_HOLE|KEEP_SIZE and write-zeroes
 * as ZERO_RANGE: both free the store's pages at once.  Ranges are clipped
 * to the end of the device unless zeroing without KEEP_SIZE would grow the
 * file, which it cannot.  Allocating modes have nothing to allocate in
 * advance and are not supported.
 */
static void
serve_fallocate (fuse_req_t req, struct store *store, int mode, off_t offset,
                 off_t length)
{
  uint64_t device_bytes = store_size (store);
  uint64_t start = offset, end = (uint64_t) offset + length;

  switch (mode) {
  case FALLOC_FL_ZERO_RANGE:
    if (end > device_bytes) {
      fuse_reply_err (req, EFBIG);
      return;
    }
    break;
  case FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE:
  case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE:
    break;
  default:
    fuse_reply_err (req, EOPNOTSUPP);
    return;
  }
  end = MIN (end, device_bytes);
  fuse_reply_err (req, start < end ? -store_zero (store, end - start, start)
                                   : 0);
}

static void
device_fallocate (fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
                  off_t length, struct fuse_file_info *fi)
{
  uint64_t start_ns = monotonic_ns ();
  struct store *store = request_device (req)->store;

  (void) ino;
  (void) fi;
  memory_safety_mark_io_thread ();
  serve_fallocate (req, store, mode, offset, length);
  store_note_request (store, STORE_REQUEST_TRIM, monotonic_ns () - start_ns);
}

/* Memory is the medium: once a write is stored it is as durable as it
 * will ever be.
 */
static void
device_flush (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void) ino;
  (void) fi;
  fuse_reply_err (req, 0);
}

static void
device_fsync (fuse_req_t req, fuse_ino_t ino, int datasync,
              struct fuse_file_info *fi)
{
  (void) ino;
  (void) datasync;
  (void) fi;
  fuse_reply_err (req, 0);
}

static void
device_statfs (fuse_req_t req, fuse_ino_t ino)
{
  struct store *store = request_device (req)->store;
  uint64_t device_pages, pages_stored = store_pages_stored (store);
  struct statvfs sv;

  (void) ino;
  device_pages = store_size (store) / CSWAP_PAGE_SIZE;
  /* f_bsize is also the discard granularity a loop device takes. */
  sv = (struct statvfs) {
    .f_bsize = CSWAP_PAGE_SIZE,
    .f_frsize = CSWAP_PAGE_SIZE,
    .f_blocks = device_pages,
    .f_bfree = device_pages - pages_stored,
    .f_bavail = device_pages - pages_stored,
    .f_files = 2,
    .f_namemax = sizeof SWAP_NAME - 1,
  };
  fuse_reply_statfs (req, &sv);
}

/* The name space is fixed: nothing can be created, linked, renamed or
 * removed.
 */
static void
refuse_mknod (fuse_req_t req, fuse_ino_t parent, const char *name,
              mode_t mode, dev_t rdev)
{
  (void) parent;
  (void) name;
  (void) mode;
  (void) rdev;
  fuse_reply_err (req, EPERM);
}

static void
refuse_mkdir (fuse_req_t req, fuse_ino_t parent, const char *name,
              mode_t mode)
{
  (void) parent;
  (void) name;
  (void) mode;
  fuse_reply_err (req, EPERM);
}

static void
refuse_create (fuse_req_t req, fuse_ino_t parent, const char *name,
               mode_t mode, struct fuse_file_info *fi)
{
  (void) parent;
  (void) name;
  (void) mode;
  (void) fi;
  fuse_reply_err (req, EPERM);
}

static void
refuse_remove (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  (void) parent;
  (void) name;
  fuse_reply_err (req, EPERM);
}

static void
refuse_symlink (fuse_req_t req, const char *target, fuse_ino_t parent,
                const char *name)
{
  (void) target;
  (void) parent;
  (void) name;
  fuse_reply_err (req, EPERM);
}

static void
refuse_link (fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent,
             const char *new_name)
{
  (void) ino;
  (void) new_parent;
  (void) new_name;
  fuse_reply_err (req, EPERM);
}

static void
refuse_rename (fuse_req_t req, fuse_ino_t parent, const char *name,
               fuse_ino_t new_parent, const char *new_name,
               unsigned int flags)
{
  (void) parent;
  (void) name;
  (void) new_parent;
  (void) new_name;
  (void) flags;
  fuse_reply_err (req, EPERM);
}

const struct fuse_lowlevel_ops fuse_device_ops = {
  .init = device_init,
  .lookup = device_lookup,
  .getattr = device_getattr,
  .setattr = device_setattr,
  .open = device_open,
  .readdir = device_readdir,
  .read = device_read,
  .write = device_write,
  .fallocate = device_fallocate,
  .flush = device_flush,
  .fsync = device_fsync,
  .fsyncdir = device_fsync,
  .statfs = device_statfs,
  .mknod = refuse_mknod,
  .mkdir = refuse_mkdir,
  .create = refuse_create,
  .unlink = refuse_remove,
  .rmdir = refuse_remove,
  .symlink = refuse_symlink,
  .link = refuse_link,
  .rename = refuse_rename,
};
