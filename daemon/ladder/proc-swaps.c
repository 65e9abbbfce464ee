/* cswap: reading /proc/swaps without allocating (see proc-swaps.h). */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "proc-swaps.h"
#include "small-file.h"

#define PROC_SWAPS "/proc/swaps"
#define PROC_SWAPS_BYTES 8192

static bool
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

static const char *
skip_blanks (const char *p)
{
  while (is_blank (*p))
    p++;
  return p;
}

/* Copies the field at FIELD (to the first blank) into OUT (SIZE bytes),
 * undoing the kernel's \ooo escapes; returns the end of the field.
 */
static const char *
unescape_field (const char *field, char *out, size_t size)
{
  size_t n = 0;

  while (*field && !is_blank (*field) && *field != '\n') {
    char c = *field++;

    if (c == '\\' && field[0] >= '0' && field[0] <= '3'
        && field[1] >= '0' && field[1] <= '7'
        && field[2] >= '0' && field[2] <= '7') {
      c = (field[0] - '0') * 64 + (field[1] - '0') * 8 + field[2] - '0';
      field += 3;
    }
    if (n < size - 1)
      out[n++] = c;
  }
  out[n] = '\0';
  return field;
}

static const char *
skip_field (const char *p)
{
  while (*p && !is_blank (*p) && *p != '\n')
    p++;
  return p;
}

/* The decimal at *P (a '-' first allowed), which moves past it. */
static int64_t
parse_decimal (const char **p)
{
  const char *s = skip_blanks (*p);
  bool negative = *s == '-';
  int64_t n = 0;

  s += negative;
  while (*s >= '0' && *s <= '9')
    n = n * 10 + (*s++ - '0');
  *p = s;
  return negative ? -n : n;
}

int
proc_swaps_each (void (*each) (const struct proc_swap_area *area, void *arg),
                 void *arg)
{
  char swaps[PROC_SWAPS_BYTES], name[PATH_MAX];
  const char *line;
  int count = 0;

  if (read_small_file (PROC_SWAPS, swaps, sizeof swaps) <= 0)
    return -1;
  line = swaps;
  while ((line = strchr (line, '\n')) && *++line) {
    struct proc_swap_area area = { .name = name };
    const char *p = unescape_field (line, name, sizeof name);
    struct stat st;

    if (stat (name, &st) == 0 && S_ISBLK (st.st_mode))
      area.rdev = st.st_rdev;
    p = skip_field (skip_blanks (p));           /* Type */
    area.size_bytes = (uint64_t) parse_decimal (&p) << 10;
    area.used_bytes = (uint64_t) parse_decimal (&p) << 10;
    area.priority = parse_decimal (&p);
    count++;
    if (each)
      each (&area, arg);
  }
  return count;
}
