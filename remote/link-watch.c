/* cswap: remote/link-watch.c — healing a device's dropped connections
 * (link-watch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "link-watch.h"
#include "nbd-netlink.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57    /* Linux 5.6; older headers lack it */
#endif

/* How often the watcher looks whether the device is still its own. */
#define OWNER_CHECK_MS 2000
/* Reconnection attempts back off from 1 s to this. */
#define RETRY_MAX_S 8

static void
warn (const char *what)
{
  fprintf (stderr, "cswap-connect: warning: %s: %m\n", what);
}

void
link_watch_protect (void)
{
  int fd;

  /* A reconnection runs while the device's requests wait: its memory must
   * not be swapped out to it, nor its allocations wait on reclaim that
   * writes to it.  MCL_ONFAULT: what the first connection touched stays
   * (a reconnection runs the same code), not every page of libcrypto
   * (5 MiB resident instead of 8 in the VM test).
   */
  if (mlockall (MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT))
    warn ("mlockall");
  if (prctl (PR_SET_IO_FLUSHER, 1, 0, 0, 0))
    warn ("prctl PR_SET_IO_FLUSHER (needs CAP_SYS_RESOURCE)");
  fd = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd == -1 || write (fd, "-1000", 5) != 5)
    warn ("oom_score_adj -1000");
  if (fd != -1)
    close (fd);
}

/* Whether /dev/nbd<INDEX> is still connected by this process: the driver
 * keeps the connecting task's pid in sysfs while it is connected.
 */
static bool
device_is_ours (unsigned index)
{
  char path[64], text[32];
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "/sys/block/nbd%u/pid", index);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd == -1)
    return false;
  n = read (fd, text, sizeof text - 1);
  close (fd);
  if (n <= 0)
    return false;
  text[n] = '\0';
  return strtol (text, NULL, 10) == getpid ();
}

/* Whether INFO, a new connection's, is the export the device left. */
static bool
same_contents (const struct link_watch *watch, const struct nbd_export_info *info)
{
  const struct nbd_export_info *old = &watch->export;

  if (info->size != old->size)
    return false;
  /* A server that names no contents (not cswap) keeps its own data. */
  return !old->has_contents_id
    || (info->has_contents_id && info->contents_id == old->contents_id);
}

enum reconnect_outcome {
  RECONNECTED,
  DEVICE_GONE,                  /* disconnected by another: nothing to heal */
  CONTENTS_CHANGED,             /* and so disconnected here */
};

/* Replaces one dead connection; retries until it can, or until the
 * device is no longer this process's.
 */
static enum reconnect_outcome
reconnect (const struct link_watch *watch)
{
  unsigned delay_s = 1;

  while (device_is_ours (watch->index)) {
    struct nbd_channel channel;
    struct nbd_export_info info;
    int r = remote_negotiate (watch->target, &channel, &info);

    if (r == 0 && !same_contents (watch, &info)) {
      fprintf (stderr, "cswap-connect: %s: export \"%s\" now holds other "
               "contents (id %016" PRIx64 ", was %016" PRIx64 "): the server "
               "restarted or dropped it, and the pages /dev/nbd%u left there "
               "are gone; disconnecting /dev/nbd%u, whose reads fail from now on\n",
               watch->target->server, watch->target->export, info.contents_id,
               watch->export.contents_id, watch->index, watch->index);
      remote_release (&channel);
      nbd_netlink_disconnect (watch->index);
      return CONTENTS_CHANGED;
    }
    if (r == 0 && nbd_netlink_reconfigure (watch->index, channel.fd) == 0) {
      fprintf (stderr, "cswap-connect: /dev/nbd%u: connected again to %s "
               "export \"%s\"\n", watch->index, watch->target->server,
               watch->target->export);
      remote_release (&channel);
      return RECONNECTED;
    }
    remote_release (&channel);
    sleep (delay_s);
    if (delay_s < RETRY_MAX_S)
      delay_s *= 2;
  }
  return DEVICE_GONE;
}

int
link_watch_run (const struct link_watch *watch)
{
  while (device_is_ours (watch->index)) {
    int dead = nbd_netlink_link_dead (watch->watch, watch->index, OWNER_CHECK_MS);

    if (dead < 0) {
      perror ("cswap-connect: the nbd driver's notices");
      return 1;
    }
    if (dead) {
      fprintf (stderr, "cswap-connect: /dev/nbd%u: a connection to %s died\n",
               watch->index, watch->target->server);
      switch (reconnect (watch)) {
      case RECONNECTED: break;
      case DEVICE_GONE: return 0;
      case CONTENTS_CHANGED: return 1;
      }
    }
  }
  return 0;
}
