/* cswap: the nbdkit plugin — `nbdkit cswap size=…`.
 *
 * A thin adapter: NBD requests become calls of the request layer every
 * front end shares (blockdev.h), over the part of the store the
 * connection is served.  One store per nbdkit
 * process, shared by every connection (the data is the device's, not the
 * connection's), so multi-conn is safe: every connection sees every write
 * at once, and flush has nothing to do because memory is the medium.
 * With export= keys (nbd-exports.h), each export is an area of that
 * store.  Without them, a client may name a window of the one device
 * (nbd-window.h), and the plugin follows a ladder of such windows as
 * cswap-fuse follows its loop devices (ladder-follow.h).  A connection's
 * handle is the part of the store it is served.
 *
 * Start-up and shutdown are cswap-fuse's too (daemon-life.h): set-up that
 * can fail (the store, the control socket) runs in .get_ready, where an
 * error still reaches the user before nbdkit starts serving; threads and
 * memory locks in .after_fork, because nbdkit forks after .get_ready when
 * it daemonizes or runs --run, and neither survives a fork; the rest in
 * .unload.
 */
#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "blockdev.h"
#include "config-file.h"
#include "contents-id.h"
#include "daemon-life.h"
#include "daemon-log.h"
#include "ladder-follow.h"
#include "memory-safety.h"
#include "nbd-exports-control.h"
#include "nbd-exports.h"
#include "nbd-exports-idle.h"
#include "nbd-window.h"
#include "nbdkit-command-line.h"
#include "nbdkit-settings.h"
#include "options-help.h"
#include "options.h"
#include "page.h"
#include "parent-death.h"
#include "store.h"

static struct cswap_options options;
static struct nbd_exports exports;
/* Without exports: the follower of a ladder of window exports
 * (ladder-follow.h), made in .get_ready.
 */
static struct ladder *ladder;
/* life.store is the device, made in .get_ready. */
static struct daemon_life life = { .name = "cswap", .error = nbdkit_error };

static void
cswap_load (void)
{
  char **argv;
  int argc, r;

  options_init (&options);
  nbd_exports_init (&exports);
  argc = nbdkit_command_line (&argv);
  if (argc < 0) {
    fprintf (stderr, "cswap: warning: reading /proc/self/cmdline: %s "
             "(nbdkit may stop when the process that started it exits, "
             "and its TLS libraries are locked whole)\n", strerror (-argc));
    life.tls_possible = true;
    return;
  }
  life.tls_possible = !nbdkit_command_line_tls_off (argc, argv);
  /* As early as a plugin can: nbdkit has already armed the signal. */
  r = parent_death_keep_running (argc, argv);
  if (r < 0)
    fprintf (stderr, "cswap: warning: prctl PR_SET_PDEATHSIG 0: %s (nbdkit "
             "may stop when the process that started it exits)\n",
             strerror (-r));
}

static void
cswap_unload (void)
{
  nbd_exports_idle_stop ();
  /* `cswap down` has stopped the follower before it turned swap off;
   * should it still be in a swapon, which reads through a connection
   * that is gone now, ladder_shut leaves it after a few seconds.
   */
  ladder_shut (ladder);
  daemon_stop (&life);
  ladder_destroy (ladder);
  nbd_exports_free (&exports);
}

static int
cswap_config (const char *key, const char *value)
{
  const char *why;

  /* config=FILE (cswap.conf(5)): read in place, so that keys before it
   * are overridden by the file and keys after it override the file.
   */
  if (strcmp (key, "config") == 0) {
    if (config_file_read (value, &options, NULL, NULL, &why) == -1) {
      nbdkit_error ("%s", why);
      return -1;
    }
    return 0;
  }
  int r = nbd_exports_config (&exports, key, value, &why);
  if (r) {
    if (r == -1)
      nbdkit_error ("%s", why);
    return r == 1 ? 0 : -1;
  }
  if (options_set (&options, key, value, &why) == -1) {
    nbdkit_error ("%s", why);
    return -1;
  }
  return 0;
}

static int
cswap_config_complete (void)
{
  const char *why;

  if (options_finish (&options, &why) == -1
      || nbd_exports_finish (&exports, &options.store, &why) == -1) {
    nbdkit_error ("%s", why);
    return -1;
  }
  return 0;
}

/* Without exports, every name is the one device (area 0 at offset 0),
 * or a window of it (nbd-window.h).
 */
static struct nbd_export whole_device = { .name = "", .label = "",
                                          .area = 0 };

/* A client's handle: the export it named, and the part of the store it
 * is served, with the ladder to tell of its writes.
 */
struct connection {
  struct nbd_export *export;
  struct blockdev window;
};

static int
cswap_get_ready (void)
{
  if (daemon_prepare (&life, &options) == -1)
    return -1;
  nbd_export_new_contents (&whole_device);
  int r = nbd_exports_apply (&exports, life.store);
  if (r) {
    nbdkit_error ("export quotas: %s", strerror (-r));
    return -1;
  }
  if (nbd_exports_active (&exports)) {
    control_server_extend (life.control, nbd_exports_control_extension
                           (&exports, life.store));
    return 0;
  }
  /* One device, most likely this machine's swap: say what nbdkit's
   * settings and the machine's lack for that, before nbdkit forks (so
   * that the warnings reach the terminal) and serves.
   */
  char **argv;
  int argc = nbdkit_command_line (&argv);
  if (argc >= 0)
    nbdkit_settings_warn (argc, argv);
  ladder = ladder_create (NULL, life.store);
  if (ladder == NULL) {
    nbdkit_error ("the ladder's follower: %m");
    return -1;
  }
  control_server_extend (life.control, ladder_control_extension (ladder));
  return 0;
}

static int
cswap_after_fork (void)
{
  if (daemon_start_after_fork (&life) == -1)
    return -1;
  int r = nbd_exports_idle_start (&exports, life.store);
  if (r) {
    nbdkit_error ("starting the export-idle-drop thread: %s", strerror (-r));
    return -1;
  }
  return 0;
}

static void
cswap_dump_plugin (void)
{
  printf ("cswap_version=%s\n", CSWAP_VERSION);
  printf ("cswap_codecs=lz4 zstd\n");
  printf ("cswap_default_codec=%s\n", codec_name (options.store.codec.id));
  printf ("cswap_default_level=%d\n", options.store.codec.level);
  printf ("cswap_page_size=%zu\n", CSWAP_PAGE_SIZE);
}

/* Lists E (nbd_exports_each, which keeps its name still meanwhile). */
static int
list_export (void *list, const struct nbd_export *e)
{
  return nbdkit_add_export (list, e->name, NULL);
}

static int
cswap_list_exports (int readonly, int is_tls, struct nbdkit_exports *list)
{
  (void) readonly;
  (void) is_tls;
  if (!nbd_exports_active (&exports))
    return nbdkit_use_default_export (list);
  if (exports.unlisted)
    return 0;
  return nbd_exports_each (&exports, list_export, list);
}

static const char *
cswap_default_export (int readonly, int is_tls)
{
  (void) readonly;
  (void) is_tls;
  if (exports.unlisted)
    return NULL;                /* nbdkit then refuses the client */
  return exports.configured ? exports.list[0].name : "";
}

/* The part of the store a client that names NAME is served: an export's
 * area, the whole device, or a window of it.  0, or -1 with *WHY.
 */
static int
serve_name (const char *name, struct connection *c, const char **why)
{
  uint64_t area_bytes = store_area_size (life.store);
  struct blockdev *w = &c->window;

  *w = (struct blockdev) { .store = life.store, .ladder = ladder };
  if (nbd_exports_active (&exports)) {
    c->export = nbd_exports_open (&exports, life.store, name, why);
    if (c->export == NULL)
      return -1;
    w->base_bytes = c->export->area * area_bytes;
    w->size_bytes = area_bytes;
    return 0;
  }
  c->export = &whole_device;
  switch (nbd_window_parse (name, area_bytes, &w->base_bytes, &w->size_bytes,
                            why)) {
  case 0:
    w->base_bytes = 0;
    w->size_bytes = area_bytes;
    return 0;
  case 1:
    return 0;
  default:
    return -1;
  }
}

/* Why a client is refused is said through daemon_log, not nbdkit_error:
 * nbdkit (1.32) only logs the error's text, to stderr under stderr's
 * stdio lock or to syslog, and sends the client nothing but the refusal;
 * and the thread that opens may be one the swap device waits on (a
 * reconnection of it), which must not wait on stderr (daemon-log.h).
 */
static void *
cswap_open (int readonly)
{
  const char *name = nbdkit_export_name ();
  struct connection *c = malloc (sizeof *c);
  const char *why;

  (void) readonly;
  if (c == NULL) {
    daemon_log ("cswap: error: a client's connection: out of memory\n");
    return NULL;
  }
  if (serve_name (name ? name : "", c, &why) == -1) {
    daemon_log ("cswap: error: %s\n", why);
    free (c);
    return NULL;
  }
  return c;
}

static void
cswap_close (void *handle)
{
  struct connection *c = handle;

  if (c->export != &whole_device)
    nbd_exports_close (&exports, c->export);
  free (c);
}

/* The export's description carries its contents id (contents-id.h). */
static const char *
cswap_export_description (void *handle)
{
  const struct connection *c = handle;
  const struct nbd_export *e = c->export;

  return nbdkit_printf_intern ("cswap export \"%s\", " CONTENTS_ID_LABEL
                               "%0*" PRIx64, e->name, CONTENTS_ID_DIGITS,
                               atomic_load (&e->contents_id));
}

static int64_t
cswap_get_size (void *handle)
{
  const struct connection *c = handle;

  return c->window.size_bytes;
}

/* The largest read or write nbdkit serves: it refuses any request over
 * 64 MiB (MAX_REQUEST_SIZE in nbdkit's server/internal.h, 1.32 and
 * since) before the plugin sees it, and neither tells a plugin the limit
 * nor caps the plugin's answer.  The store takes any length, so this is
 * nbdkit's limit alone: advertising more (it was 0xffffffff) let a client
 * that believes the block-size answer send 65 MiB and get ERANGE.
 */
#define NBDKIT_MAX_REQUEST_BYTES (64 * 1024 * 1024)

static int
cswap_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                  uint32_t *maximum)
{
  (void) handle;
  *minimum = 512;               /* smaller requests work, but cost a page RMW */
  *preferred = CSWAP_PAGE_SIZE;
  *maximum = NBDKIT_MAX_REQUEST_BYTES;
  return 0;
}

static int
cswap_can_fua (void *handle)
{
  (void) handle;
  return NBDKIT_FUA_NATIVE;     /* nothing to flush: memory is the medium */
}

static int
cswap_can_true (void *handle)
{
  (void) handle;
  return 1;
}

/* The connection behind HANDLE, once the calling thread is marked as
 * one that serves requests (memory-safety.h): nbdkit's threads are its
 * own, so each request marks its thread (a cheap check after the first).
 */
static const struct connection *
request_connection (void *handle)
{
  memory_safety_mark_io_thread ();
  return handle;
}

/* Turns a request layer's result (bytes done, or a negative errno) into
 * nbdkit's convention.
 */
static int
reply (int64_t r)
{
  if (r >= 0)
    return 0;
  nbdkit_set_error (-r);
  return -1;
}

static int
cswap_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  (void) flags;
  return reply (blockdev_read (&request_connection (handle)->window, buf,
                               count, offset));
}

/* FUA: the write is durable once stored.  -EDQUOT, an export's quota, is
 * the export's, not the device's full warning's (nbd-exports.h).
 */
static int
cswap_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
              uint32_t flags)
{
  const struct connection *c = request_connection (handle);
  int64_t r = blockdev_write (&c->window, buf, count, offset);

  (void) flags;
  return reply (nbd_export_note_refusal (c->export, r < 0 ? r : 0));
}

/* Zeroing frees pages: always fast, never allocates (flags: FUA, fast
 * zero, may-trim, all true already).
 */
static int
cswap_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  (void) flags;
  return reply (blockdev_zero (&request_connection (handle)->window, count,
                               offset));
}

/* Trimmed ranges read back as zeros: the same as write-zeroes. */
static int
cswap_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  (void) flags;
  return reply (blockdev_zero (&request_connection (handle)->window, count,
                               offset));
}

/* Block status (nbdinfo --map, nbdcopy): pages that read as zeros and
 * hold no memory are holes, the rest data.  Page granular.
 */
static int
cswap_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
               struct nbdkit_extents *extents)
{
  const struct connection *c = request_connection (handle);

  while (count > 0) {
    bool zero;
    uint64_t length;
    int r = blockdev_extent (&c->window, offset, count, &zero, &length);
    if (r)
      return reply (r);
    if (nbdkit_add_extent (extents, offset, length,
                           zero ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO : 0) == -1)
      return -1;
    if (flags & NBDKIT_FLAG_REQ_ONE)
      break;
    offset += length;
    count -= length;
  }
  return 0;
}

static int
cswap_flush (void *handle, uint32_t flags)
{
  (void) handle;
  (void) flags;
  return 0;
}

static struct nbdkit_plugin plugin = {
  .name = "cswap",
  .longname = "cswap compressed swap device",
  .version = CSWAP_VERSION,
  .description = "A compressed RAM block device for swap",
  .load = cswap_load,
  .unload = cswap_unload,
  .config = cswap_config,
  .config_complete = cswap_config_complete,
  .config_help = CSWAP_OPTIONS_HELP "\n" NBD_EXPORTS_HELP,
  .magic_config_key = "size",
  .get_ready = cswap_get_ready,
  .after_fork = cswap_after_fork,
  .dump_plugin = cswap_dump_plugin,
  .list_exports = cswap_list_exports,
  .default_export = cswap_default_export,
  .open = cswap_open,
  .close = cswap_close,
  .export_description = cswap_export_description,
  .get_size = cswap_get_size,
  .block_size = cswap_block_size,
  .can_write = cswap_can_true,
  .can_flush = cswap_can_true,
  .can_trim = cswap_can_true,
  .can_zero = cswap_can_true,
  .can_fast_zero = cswap_can_true,
  .can_multi_conn = cswap_can_true,
  .can_extents = cswap_can_true,
  .can_fua = cswap_can_fua,
  .pread = cswap_pread,
  .pwrite = cswap_pwrite,
  .zero = cswap_zero,
  .trim = cswap_trim,
  .extents = cswap_extents,
  .flush = cswap_flush,
  .errno_is_preserved = 0,
};

/* Requests run in parallel: the store locks per page. */
#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL
NBDKIT_REGISTER_PLUGIN (plugin)
