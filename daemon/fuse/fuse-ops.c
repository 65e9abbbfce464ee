/* cswap: the libfuse adapter — libfuse's low-level operations on top of
 * device.h, for the classic transport (fuse_session_loop_mt).
 *
 * Each operation turns libfuse's arguments into a device.h call and its
 * result into a fuse_reply_*; the rules themselves (sizes, EFBIG, EPERM,
 * what fallocate takes) are device.c's, shared with the raw dispatcher
 * (fuse-raw-dispatch.c) that the io_uring transport uses.
 *
 * Open sets direct_io so the kernel keeps no page-cache copy of swapped
 * pages (that copy would be uncompressed and defeat the point), and the
 * connection has no writeback cache and no readahead.
 *
 * Locking: none here.  Requests on different worker threads share only
 * the store, which is thread-safe and locks per page.  Each worker thread
 * reads into a buffer of its own (thread-specific data, freed when the
 * thread exits).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/param.h>

#include "fuse-ops.h"
#include "memory-safety.h"

static struct device *
request_device (fuse_req_t req)
{
  return fuse_req_userdata (req);
}

static void
op_init (void *userdata, struct fuse_conn_info *conn)
{
  (void) userdata;
  conn->max_write = BLOCKDEV_MAX_IO_BYTES;
  /* Reading ahead on swap reads pages nobody asked for; the kernel's swap
   * readahead already decides what to bring in.
   */
  conn->max_readahead = 0;
  /* Several reads of one file in flight at once, and a loop device's
   * asynchronous direct I/O stays asynchronous through FUSE.
   */
  conn->want |= conn->capable & (FUSE_CAP_ASYNC_READ | FUSE_CAP_ASYNC_DIO);
  /* A writeback cache would keep swapped pages uncompressed in the page
   * cache; splicing costs more than a copy for 4 KiB requests.
   */
  conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ
                  | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
}

static void
reply_entry (fuse_req_t req, fuse_ino_t ino)
{
  struct fuse_entry_param entry = {
    .ino = ino,
    .attr_timeout = DEVICE_ATTR_TIMEOUT_S,
    .entry_timeout = DEVICE_ENTRY_TIMEOUT_S,
  };

  device_attr (request_device (req), ino, &entry.attr);
  fuse_reply_entry (req, &entry);
}

static void
reply_attr (fuse_req_t req, fuse_ino_t ino)
{
  struct stat st;

  device_attr (request_device (req), ino, &st);
  fuse_reply_attr (req, &st, DEVICE_ATTR_TIMEOUT_S);
}

static void
op_lookup (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  int64_t ino = device_lookup (parent, name);

  if (ino < 0)
    fuse_reply_err (req, -ino);
  else
    reply_entry (req, ino);
}

static void
op_getattr (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void) fi;
  reply_attr (req, ino);
}

static void
op_setattr (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
            struct fuse_file_info *fi)
{
  struct device_attr_change change = {
    .size = to_set & FUSE_SET_ATTR_SIZE,
    .mode = to_set & FUSE_SET_ATTR_MODE,
    .uid = to_set & FUSE_SET_ATTR_UID,
    .gid = to_set & FUSE_SET_ATTR_GID,
    .to = *attr,
  };
  int r = device_setattr (request_device (req), ino, &change);

  (void) fi;
  if (r < 0)
    fuse_reply_err (req, -r);
  else
    reply_attr (req, ino);
}

static void
op_open (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  int r = device_open (ino, fi->flags);

  if (r < 0) {
    fuse_reply_err (req, -r);
    return;
  }
  fi->direct_io = 1;
  fi->keep_cache = 0;
  fi->noflush = 1;
#if FUSE_VERSION >= FUSE_MAKE_VERSION (3, 15)
  fi->parallel_direct_writes = 1;
#endif
  fuse_reply_open (req, fi);
}

static void
op_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
            struct fuse_file_info *fi)
{
  char buf[256];                /* room for all three entries */
  size_t room = MIN (size, sizeof buf), used = 0;

  (void) ino;
  (void) fi;
  for (size_t i = offset; i < device_dir_entry_count; i++) {
    const struct device_dir_entry *e = &device_dir_entries[i];
    struct stat st = { .st_ino = e->ino, .st_mode = e->type };
    size_t len = fuse_add_direntry (req, buf + used, room - used, e->name,
                                    &st, i + 1);

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

static void
op_read (fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
         struct fuse_file_info *fi)
{
  memory_safety_mark_io_thread ();
  void *buf = thread_read_buffer (size);
  int64_t r;

  (void) ino;
  (void) fi;
  if (buf == NULL) {
    fuse_reply_err (req, ENOMEM);
    return;
  }
  r = blockdev_read (&request_device (req)->blockdev, buf, size, offset);
  if (r < 0)
    fuse_reply_err (req, -r);
  else
    fuse_reply_buf (req, buf, r);
}

static void
op_write (fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
          off_t offset, struct fuse_file_info *fi)
{
  memory_safety_mark_io_thread ();
  int64_t r = blockdev_write (&request_device (req)->blockdev, buf, size,
                              offset);

  (void) ino;
  (void) fi;
  if (r < 0)
    fuse_reply_err (req, -r);
  else
    fuse_reply_write (req, r);
}

static void
op_fallocate (fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
              off_t length, struct fuse_file_info *fi)
{
  memory_safety_mark_io_thread ();
  (void) ino;
  (void) fi;
  fuse_reply_err (req, -device_fallocate (request_device (req), mode, offset,
                                          length));
}

/* Memory is the medium: once a write is stored it is as durable as it
 * will ever be.
 */
static void
op_flush (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  (void) ino;
  (void) fi;
  fuse_reply_err (req, 0);
}

static void
op_fsync (fuse_req_t req, fuse_ino_t ino, int datasync,
          struct fuse_file_info *fi)
{
  (void) ino;
  (void) datasync;
  (void) fi;
  fuse_reply_err (req, 0);
}

static void
op_statfs (fuse_req_t req, fuse_ino_t ino)
{
  struct statvfs sv;

  (void) ino;
  device_statfs (request_device (req), &sv);
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
  .init = op_init,
  .lookup = op_lookup,
  .getattr = op_getattr,
  .setattr = op_setattr,
  .open = op_open,
  .readdir = op_readdir,
  .read = op_read,
  .write = op_write,
  .fallocate = op_fallocate,
  .flush = op_flush,
  .fsync = op_fsync,
  .fsyncdir = op_fsync,
  .statfs = op_statfs,
  .mknod = refuse_mknod,
  .mkdir = refuse_mkdir,
  .create = refuse_create,
  .unlink = refuse_remove,
  .rmdir = refuse_remove,
  .symlink = refuse_symlink,
  .link = refuse_link,
  .rename = refuse_rename,
};
