/* cswap: whether the kernel swaps to a device file (swap-users.h).
 *
 * Each swap area's name (proc-swaps.h reads /proc/swaps) is stat()ed,
 * and a block device's loop attribute read through
 * /sys/dev/block/MAJ:MIN, whatever the device node is called.  Every
 * step is async-signal-safe, which is also why the strings are built by
 * hand.
 *
 * Threads: none of its own; no state, so any thread or signal handler
 * can call it.
 */
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "proc-swaps.h"
#include "small-file.h"
#include "swap-users.h"

/* Appends the decimal N at P; returns the end. */
static char *
append_decimal (char *p, unsigned n)
{
  char digits[12];
  int i = 0;

  do
    digits[i++] = '0' + n % 10;
  while ((n /= 10) > 0);
  while (i > 0)
    *p++ = digits[--i];
  return p;
}

static char *
append_string (char *p, const char *s)
{
  size_t length = strlen (s);

  memcpy (p, s, length);
  return p + length;
}

/* Whether the block device DEVICE is a loop device over FILE. */
static bool
loop_backs_onto (const char *device, const char *file)
{
  char path[96], *p = path, backing[PATH_MAX + 2];
  struct stat st;
  ssize_t length;

  if (stat (device, &st) == -1 || !S_ISBLK (st.st_mode))
    return false;
  p = append_string (p, "/sys/dev/block/");
  p = append_decimal (p, major (st.st_rdev));
  *p++ = ':';
  p = append_decimal (p, minor (st.st_rdev));
  p = append_string (p, "/loop/backing_file");
  *p = '\0';
  length = read_small_file (path, backing, sizeof backing);
  if (length <= 0)
    return false;
  if (backing[length - 1] == '\n')
    backing[--length] = '\0';
  return strcmp (backing, file) == 0;
}

struct lister {
  const char *file;
  void (*found) (const char *device, void *arg);
  void *arg;
  unsigned count;
};

static void
note_area (const struct proc_swap_area *area, void *arg)
{
  struct lister *l = arg;

  if (loop_backs_onto (area->name, l->file)) {
    l->count++;
    if (l->found)
      l->found (area->name, l->arg);
  }
}

unsigned
swap_users_list (const char *file,
                 void (*found) (const char *device, void *arg), void *arg)
{
  struct lister l = { .file = file, .found = found, .arg = arg };

  proc_swaps_each (note_area, &l);
  return l.count;
}

static void
keep_first (const char *device, void *arg)
{
  char *first = arg;
  size_t length;

  if (first[0] != '\0')
    return;
  length = strnlen (device, SWAP_USERS_DEVICE_BYTES - 1);
  memcpy (first, device, length);
  first[length] = '\0';
}

bool
swap_users_first (const char *file, char device[SWAP_USERS_DEVICE_BYTES])
{
  device[0] = '\0';
  return swap_users_list (file, keep_first, device) > 0;
}
