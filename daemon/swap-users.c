/* cswap: whether the kernel swaps to a device file (swap-users.h).
 *
 * /proc/swaps is read whole into a buffer on the stack (the kernel has
 * at most a few dozen swap areas, about 80 bytes a line); for each line
 * after the header, the first field, unescaped (the kernel writes a
 * space in a path as \040), is stat()ed, and a block device's loop
 * attribute read through /sys/dev/block/MAJ:MIN, whatever the device
 * node is called.  Every step is async-signal-safe, which is also why
 * the strings are built by hand.
 *
 * Threads: none of its own; no state, so any thread or signal handler
 * can call it.
 */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "swap-users.h"

#define PROC_SWAPS "/proc/swaps"
#define PROC_SWAPS_BYTES 8192

/* Reads up to SIZE - 1 bytes of PATH into BUFFER, NUL-terminated; the
 * length, or -1.
 */
static ssize_t
read_small_file (const char *path, char *buffer, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  size_t length = 0;
  ssize_t r;

  if (fd == -1)
    return -1;
  while (length < size - 1
         && (r = read (fd, buffer + length, size - 1 - length)) > 0)
    length += r;
  close (fd);
  buffer[length] = '\0';
  return length;
}

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

/* Copies the field at FIELD (to the first blank) into OUT (SIZE bytes),
 * undoing the kernel's \ooo escapes.
 */
static void
unescape_field (const char *field, char *out, size_t size)
{
  size_t n = 0;

  while (*field && *field != ' ' && *field != '\t' && *field != '\n'
         && n < size - 1) {
    if (field[0] == '\\' && field[1] >= '0' && field[1] <= '3'
        && field[2] >= '0' && field[2] <= '7'
        && field[3] >= '0' && field[3] <= '7') {
      out[n++] = (field[1] - '0') * 64 + (field[2] - '0') * 8 + field[3] - '0';
      field += 4;
    }
    else
      out[n++] = *field++;
  }
  out[n] = '\0';
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

unsigned
swap_users_list (const char *file,
                 void (*found) (const char *device, void *arg), void *arg)
{
  char swaps[PROC_SWAPS_BYTES], device[PATH_MAX];
  const char *line;
  unsigned count = 0;

  if (read_small_file (PROC_SWAPS, swaps, sizeof swaps) <= 0)
    return 0;
  line = strchr (swaps, '\n');          /* after the header */
  while (line && *++line) {
    unescape_field (line, device, sizeof device);
    if (loop_backs_onto (device, file)) {
      count++;
      if (found)
        found (device, arg);
    }
    line = strchr (line, '\n');
  }
  return count;
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
