/* cswap: decoding raw FUSE requests and encoding their replies (see
 * fuse-raw.h).
 *
 * The operations and their answers are the libfuse adapter's
 * (fuse-ops.c), request for request: the same device.h calls, the same
 * replies, and ENOSYS where libfuse 3.14 answers ENOSYS for an operation
 * cswap leaves out.  What libfuse does on its own is done here: OPENDIR,
 * RELEASE and RELEASEDIR succeed with nothing to keep, FORGET and
 * INTERRUPT get no reply (requests are short and never interrupted).
 *
 * Unlike libfuse 3.14, the raw transports can say
 * FOPEN_PARALLEL_DIRECT_WRITES on open: the store locks per page, so
 * writes need not queue on the inode lock.
 *
 * Locking: none; every call works only on its own request and reply.
 */
#include <errno.h>
#include <string.h>
#include <sys/param.h>

#include "fuse-raw.h"
#include "fuse-uring-abi.h"

size_t
raw_op_args_size (uint32_t opcode)
{
  switch (opcode) {
  case FUSE_GETATTR: return sizeof (struct fuse_getattr_in);
  case FUSE_SETATTR: return sizeof (struct fuse_setattr_in);
  case FUSE_OPEN:
  case FUSE_OPENDIR: return sizeof (struct fuse_open_in);
  case FUSE_READ:
  case FUSE_READDIR: return sizeof (struct fuse_read_in);
  case FUSE_WRITE: return sizeof (struct fuse_write_in);
  case FUSE_FALLOCATE: return sizeof (struct fuse_fallocate_in);
  case FUSE_FLUSH: return sizeof (struct fuse_flush_in);
  case FUSE_FSYNC:
  case FUSE_FSYNCDIR: return sizeof (struct fuse_fsync_in);
  case FUSE_RELEASE:
  case FUSE_RELEASEDIR: return sizeof (struct fuse_release_in);
  case FUSE_FORGET: return sizeof (struct fuse_forget_in);
  case FUSE_BATCH_FORGET: return sizeof (struct fuse_batch_forget_in);
  case FUSE_INTERRUPT: return sizeof (struct fuse_interrupt_in);
  default: return 0;            /* none, or one this file never reads */
  }
}

static void
fill_fuse_attr (const struct stat *st, struct fuse_attr *attr)
{
  *attr = (struct fuse_attr) {
    .ino = st->st_ino,
    .size = st->st_size,
    .blocks = st->st_blocks,
    .atime = st->st_atim.tv_sec,
    .mtime = st->st_mtim.tv_sec,
    .ctime = st->st_ctim.tv_sec,
    .atimensec = st->st_atim.tv_nsec,
    .mtimensec = st->st_mtim.tv_nsec,
    .ctimensec = st->st_ctim.tv_nsec,
    .mode = st->st_mode,
    .nlink = st->st_nlink,
    .uid = st->st_uid,
    .gid = st->st_gid,
    .blksize = st->st_blksize,
  };
}

static void *
reply_struct (struct raw_reply *reply, size_t size)
{
  memset (reply->payload, 0, size);
  reply->payload_size = size;
  return reply->payload;
}

static int
lookup (const struct device *device, const struct raw_request *request,
        struct raw_reply *reply)
{
  const char *name = request->payload;
  struct fuse_entry_out *entry;
  struct stat st;
  int64_t ino;

  if (memchr (name, '\0', request->payload_size) == NULL)
    return -EINVAL;
  ino = device_lookup (request->in->nodeid, name);
  if (ino < 0)
    return ino;
  device_attr (device, ino, &st);
  entry = reply_struct (reply, sizeof *entry);
  entry->nodeid = ino;
  entry->entry_valid = DEVICE_ENTRY_TIMEOUT_S;
  entry->attr_valid = DEVICE_ATTR_TIMEOUT_S;
  fill_fuse_attr (&st, &entry->attr);
  return 0;
}

static void
reply_attr (const struct device *device, uint64_t ino, struct raw_reply *reply)
{
  struct fuse_attr_out *out = reply_struct (reply, sizeof *out);
  struct stat st;

  device_attr (device, ino, &st);
  out->attr_valid = DEVICE_ATTR_TIMEOUT_S;
  fill_fuse_attr (&st, &out->attr);
}

static int
setattr (const struct device *device, const struct raw_request *request,
         struct raw_reply *reply)
{
  const struct fuse_setattr_in *in = request->op_args;
  struct device_attr_change change = {
    .size = in->valid & FATTR_SIZE,
    .mode = in->valid & FATTR_MODE,
    .uid = in->valid & FATTR_UID,
    .gid = in->valid & FATTR_GID,
    .to = {
      .st_size = in->size,
      .st_mode = in->mode,
      .st_uid = in->uid,
      .st_gid = in->gid,
    },
  };
  int r = device_setattr (device, request->in->nodeid, &change);

  if (r == 0)
    reply_attr (device, request->in->nodeid, reply);
  return r;
}

static int
open_file (const struct raw_request *request, struct raw_reply *reply)
{
  const struct fuse_open_in *in = request->op_args;
  struct fuse_open_out *out;
  int r = device_open (request->in->nodeid, in->flags);

  if (r < 0)
    return r;
  out = reply_struct (reply, sizeof *out);
  out->open_flags = FOPEN_DIRECT_IO | FOPEN_NOFLUSH
                    | FUSE_URING_FOPEN_PARALLEL_DIRECT_WRITES;
  return 0;
}

static int
read_directory (const struct raw_request *request, struct raw_reply *reply)
{
  const struct fuse_read_in *in = request->op_args;
  size_t room = MIN (in->size, reply->payload_capacity), used = 0;
  char *buf = reply->payload;

  for (size_t i = in->offset; i < device_dir_entry_count; i++) {
    const struct device_dir_entry *e = &device_dir_entries[i];
    size_t name_len = strlen (e->name);
    size_t len = FUSE_DIRENT_ALIGN (FUSE_NAME_OFFSET + name_len);
    struct fuse_dirent *d = (struct fuse_dirent *) (buf + used);

    if (len > room - used)
      break;
    memset (d, 0, len);
    d->ino = e->ino;
    d->off = i + 1;
    d->namelen = name_len;
    d->type = (e->type & S_IFMT) >> 12;
    memcpy (d->name, e->name, name_len);
    used += len;
  }
  reply->payload_size = used;
  return 0;
}

static int
read_file (const struct device *device, const struct raw_request *request,
           struct raw_reply *reply)
{
  const struct fuse_read_in *in = request->op_args;
  int64_t r = blockdev_read (&device->blockdev, reply->payload,
                             MIN (in->size, reply->payload_capacity),
                             in->offset);

  if (r < 0)
    return r;
  reply->payload_size = r;
  return 0;
}

static int
write_file (const struct device *device, const struct raw_request *request,
            struct raw_reply *reply)
{
  const struct fuse_write_in *in = request->op_args;
  struct fuse_write_out *out;
  int64_t r;

  if (in->size > request->payload_size)
    return -EINVAL;
  r = blockdev_write (&device->blockdev, request->payload, in->size,
                      in->offset);
  if (r < 0)
    return r;
  out = reply_struct (reply, sizeof *out);
  out->size = r;
  return 0;
}

static int
fallocate_file (const struct device *device, const struct raw_request *request)
{
  const struct fuse_fallocate_in *in = request->op_args;

  return device_fallocate (device, in->mode, in->offset, in->length);
}

static int
statfs_device (const struct device *device, struct raw_reply *reply)
{
  struct fuse_statfs_out *out = reply_struct (reply, sizeof *out);
  struct statvfs sv;

  device_statfs (device, &sv);
  out->st = (struct fuse_kstatfs) {
    .blocks = sv.f_blocks,
    .bfree = sv.f_bfree,
    .bavail = sv.f_bavail,
    .files = sv.f_files,
    .ffree = sv.f_ffree,
    .bsize = sv.f_bsize,
    .namelen = sv.f_namemax,
    .frsize = sv.f_frsize,
  };
  return 0;
}

/* Returns 0 with the reply's payload filled, or a negative errno. */
static int
answer (const struct device *device, const struct raw_request *request,
        struct raw_reply *reply)
{
  switch (request->in->opcode) {
  case FUSE_LOOKUP:
    return lookup (device, request, reply);
  case FUSE_GETATTR:
    reply_attr (device, request->in->nodeid, reply);
    return 0;
  case FUSE_SETATTR:
    return setattr (device, request, reply);
  case FUSE_OPEN:
    return open_file (request, reply);
  case FUSE_OPENDIR:
    reply_struct (reply, sizeof (struct fuse_open_out));
    return 0;
  case FUSE_READDIR:
    return read_directory (request, reply);
  case FUSE_READ:
    return read_file (device, request, reply);
  case FUSE_WRITE:
    return write_file (device, request, reply);
  case FUSE_FALLOCATE:
    return fallocate_file (device, request);
  case FUSE_STATFS:
    return statfs_device (device, reply);
  /* Memory is the medium: once a write is stored it is as durable as it
   * will ever be.  Nothing is kept per open file either.
   */
  case FUSE_FLUSH:
  case FUSE_FSYNC:
  case FUSE_FSYNCDIR:
  case FUSE_RELEASE:
  case FUSE_RELEASEDIR:
  case FUSE_DESTROY:
    return 0;
  /* The name space is fixed (device.h). */
  case FUSE_MKNOD:
  case FUSE_MKDIR:
  case FUSE_CREATE:
  case FUSE_UNLINK:
  case FUSE_RMDIR:
  case FUSE_SYMLINK:
  case FUSE_LINK:
  case FUSE_RENAME:
  case FUSE_RENAME2:
    return -EPERM;
  case FUSE_INIT:               /* answered once, by fuse-raw-init.c */
    return -EPROTO;
  default:
    return -ENOSYS;
  }
}

void
raw_dispatch (const struct device *device, const struct raw_request *request,
              struct raw_reply *reply)
{
  int r;

  reply->payload_size = 0;
  reply->none = false;
  switch (request->in->opcode) {
  case FUSE_FORGET:
  case FUSE_BATCH_FORGET:
  case FUSE_INTERRUPT:
    reply->none = true;
    return;
  }
  r = answer (device, request, reply);
  if (r < 0)
    reply->payload_size = 0;
  reply->out = (struct fuse_out_header) {
    .error = r < 0 ? r : 0,
    .unique = request->in->unique,
  };
}
