/* cswapctl: which socket to talk to, and which swap devices it serves.
 *
 * A daemon knows its socket but not the block devices the kernel swaps
 * to: the cswap helper attaches those (the ladder's loop devices over
 * cswap-fuse's file, or an nbd device) and records both in its state
 * file, $CSWAP_STATE_DIR/state (default /run/cswap/state), as key=value
 * lines, the last line of a key winning: socket=PATH and devices=PATH…
 * (blank-separated, highest priority first).  That file gives the default
 * socket and, for a socket it names, the devices whose /proc/swaps lines
 * say how much swap the kernel has on them, added up.
 */
#include <stdlib.h>
#include <string.h>

#include "cswapctl.h"

#define STATE_DIR "/run/cswap"
/* The nbdkit plugin's default socket, and the service's. */
#define PLUGIN_SOCKET STATE_DIR "/cswap.sock"

/* The value of KEY in the helper's state file, into OUT; false when there
 * is no file or no such key.
 */
static bool
state_get (const char *key, char out[PATH_MAX])
{
  const char *dir = getenv ("CSWAP_STATE_DIR");
  char path[PATH_MAX];
  size_t key_len = strlen (key);
  char *line = NULL;
  size_t capacity = 0;
  ssize_t len;
  bool found = false;
  FILE *f;

  snprintf (path, sizeof path, "%s/state", dir && *dir ? dir : STATE_DIR);
  f = fopen (path, "re");
  if (f == NULL)
    return false;
  while ((len = getline (&line, &capacity, f)) != -1) {
    if (len > 0 && line[len - 1] == '\n')
      line[--len] = '\0';
    if (strncmp (line, key, key_len) == 0 && line[key_len] == '='
        && len - key_len - 1 < PATH_MAX) {
      strcpy (out, line + key_len + 1);
      found = true;
    }
  }
  free (line);
  fclose (f);
  return found;
}

/* A and B name the same file: as written, or once resolved. */
static bool
same_file (const char *a, const char *b)
{
  char real_a[PATH_MAX], real_b[PATH_MAX];

  return strcmp (a, b) == 0
    || (realpath (a, real_a) && realpath (b, real_b)
        && strcmp (real_a, real_b) == 0);
}

const char *
default_socket (void)
{
  static char recorded[PATH_MAX];

  if (state_get ("socket", recorded) && recorded[0])
    return recorded;
  return PLUGIN_SOCKET;
}

void
locate_device (struct target *t)
{
  char socket_path[PATH_MAX];

  t->devices[0] = t->device[0] = '\0';
  if (state_get ("socket", socket_path)
      && same_file (socket_path, t->socket_path)
      && state_get ("devices", t->devices))
    sscanf (t->devices, "%4095s", t->device);
}

/* NAME is one of the blank-separated DEVICES. */
static bool
is_one_of (const char *name, const char *devices)
{
  char device[PATH_MAX];
  int used;

  while (sscanf (devices, " %4095s%n", device, &used) == 1) {
    if (same_file (name, device))
      return true;
    devices += used;
  }
  return false;
}

const char *
target_name (const struct target *t)
{
  return t->device[0] ? t->device : t->socket_path;
}

bool
device_swap_use (const struct target *t, uint64_t *used_bytes,
                 uint64_t *size_bytes)
{
  char name[PATH_MAX], *line = NULL;
  unsigned long long size_kib, used_kib;
  size_t capacity = 0;
  bool found = false;
  FILE *f;

  if (t->devices[0] == '\0')
    return false;
  f = fopen ("/proc/swaps", "re");
  if (f == NULL)
    return false;
  *used_bytes = *size_bytes = 0;
  /* Filename Type Size Used Priority, sizes in KiB, after a header. */
  while (getline (&line, &capacity, f) != -1)
    if (sscanf (line, "%4095s %*s %llu %llu", name, &size_kib, &used_kib) == 3
        && is_one_of (name, t->devices)) {
      *used_bytes += used_kib * 1024;
      *size_bytes += size_kib * 1024;
      found = true;
    }
  free (line);
  fclose (f);
  return found;
}
