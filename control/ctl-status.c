/* cswapctl status: one paragraph a person reads, from the `stats` reply.
 *
 *   /dev/loop0: 1.2 GiB of swap in use, of 4.0 GiB. The pages take
 *   310.2 MiB of RAM now (peak 402.0 MiB), a ratio of 3.95; the daemon
 *   holds 330.5 MiB of RAM in all. On the backing file: 120.0 MiB of
 *   data, in 40.1 MiB of its 1.0 GiB (12.3 MiB of it stale). No
 *   warnings.
 *
 * Swap in use is the kernel's, from /proc/swaps, when the cswap helper
 * recorded the device for the socket; otherwise it is what the daemon
 * stores.  Warnings: the device or the backing file nearly full, the pool
 * limit hit (without a backing file), pages that could not be stored or read back, backing file
 * errors.  The figures and their names are the listing's (ctl-columns.c):
 * TOTAL, MEM-USED, COMP-RATIO, MEM-NOW.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cswapctl.h"

#define WRAP_COLUMNS 78
/* Nearly full, from this percent. */
#define FULL_PERCENT 90

/* "1 page", "3 pages". */
static const char *
plural (uint64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}

/* Between a number and its unit: a space the paragraph is not folded at. */
#define UNBREAKABLE_SPACE '\x1f'

static const char *
size_text (char out[SIZE_TEXT_MAX], uint64_t bytes)
{
  format_size (out, bytes, SIZE_LONG);
  *strchr (out, ' ') = UNBREAKABLE_SPACE;
  return out;
}

static unsigned
percent (uint64_t part, uint64_t whole)
{
  return whole ? (unsigned) ((double) part * 100 / whole) : 0;
}

static void
swap_sentence (FILE *f, const struct target *t, unsigned *full_percent)
{
  json_object *r = t->reply;
  uint64_t used, size;
  char a[SIZE_TEXT_MAX], b[SIZE_TEXT_MAX];

  fprintf (f, "%s: ", target_name (t));
  if (device_swap_use (t, &used, &size)) {
    fprintf (f, "%s of swap in use, of %s.", size_text (a, used),
             size_text (b, size));
    *full_percent = percent (used, size);
    return;
  }
  used = member_uint (r, "original_bytes");
  size = member_uint (r, "size_bytes");
  if (t->device[0])
    fputs ("not swap now; ", f);
  fprintf (f, "%s stored, of %s", size_text (a, used), size_text (b, size));
  fputs (t->device[0] ? "." : " (no swap device is recorded for this "
         "socket, so the kernel's swap use is not known).", f);
  *full_percent = percent (used, size);
}

static void
memory_sentence (FILE *f, json_object *r)
{
  uint64_t limit = member_uint (r, "pool_limit_bytes");
  char a[SIZE_TEXT_MAX], b[SIZE_TEXT_MAX], c[SIZE_TEXT_MAX];

  /* TOTAL and MEM-USED, as the listing has them. */
  fprintf (f, " The pages take %s of RAM now (peak %s",
           size_text (a, member_uint (r, "memory_used_bytes")),
           size_text (b, stats_memory_peak (r)));
  if (limit)
    fprintf (f, ", the pool limited to %s%s", size_text (c, limit),
             member_uint (r, "pool_limit_default")
             ? " by default, as a backing file brings" : "");
  fprintf (f, "), a ratio of %.2f; the daemon holds %s of RAM in all.",
           member_double (r, "effective_ratio"),
           size_text (a, member_uint (r, "process_rss_bytes")));
}

static void
backing_sentence (FILE *f, json_object *r, unsigned *used_percent)
{
  uint64_t size = member_uint (r, "backing_size_bytes");
  uint64_t used = member_uint (r, "backing_used_bytes");
  char a[SIZE_TEXT_MAX], b[SIZE_TEXT_MAX], c[SIZE_TEXT_MAX];

  *used_percent = percent (used, size);
  if (size == 0) {
    fputs (" No backing file.", f);
    return;
  }
  if (used == 0) {
    fprintf (f, " The backing file, %s, is empty.", size_text (a, size));
    return;
  }
  fprintf (f, " On the backing file: %s of data, in %s of its %s",
           size_text (a, stats_on_disk (r)),
           size_text (b, used), size_text (c, size));
  if (stats_stale (r))
    fprintf (f, " (%s of it stale)", size_text (a, stats_stale (r)));
  fputc ('.', f);
}

/* Appends one warning to F, "Warnings: " before the first. */
__attribute__ ((format (printf, 3, 4)))
static void
warn (FILE *f, unsigned *count, const char *fmt, ...)
{
  va_list ap;

  fputs (*count ? "; " : " Warnings: ", f);
  va_start (ap, fmt);
  vfprintf (f, fmt, ap);
  va_end (ap);
  (*count)++;
}

static void
warnings (FILE *f, json_object *r, unsigned full_percent,
          unsigned backing_percent)
{
  uint64_t limit_hits = member_uint (r, "pool_limit_hits");
  uint64_t failed = member_uint (r, "failed_writes");
  uint64_t read_errors = member_uint (r, "read_errors");
  uint64_t io = member_uint (r, "backing_io_errors");
  uint64_t enospc = member_uint (r, "backing_enospc_errors");
  uint64_t checksum = member_uint (r, "backing_checksum_errors");
  uint64_t limit = member_uint (r, "pool_limit_bytes");
  char a[SIZE_TEXT_MAX];
  unsigned count = 0;

  if (full_percent >= FULL_PERCENT)
    warn (f, &count, "the device is %u%% full", full_percent);
  if (backing_percent >= FULL_PERCENT)
    warn (f, &count, "the backing file is %u%% used", backing_percent);
  /* With a backing file a write at the limit waits for cold pages to go
   * to the file: that is the tier at work, not a warning (a write it
   * could not make room for is a failed write, below).
   */
  if (member_uint (r, "backing_size_bytes"))
    limit_hits = 0;
  /* The limit may have been lifted since. */
  if (limit_hits && limit)
    warn (f, &count, "the pool limit (%s) was hit %llu %s",
          size_text (a, limit), (unsigned long long) limit_hits,
          plural (limit_hits, "time", "times"));
  else if (limit_hits)
    warn (f, &count, "the pool limit was hit %llu %s",
          (unsigned long long) limit_hits, plural (limit_hits, "time", "times"));
  if (failed)
    warn (f, &count, "%llu %s could not be stored (the kernel got an error)",
          (unsigned long long) failed, plural (failed, "page", "pages"));
  if (read_errors)
    warn (f, &count, "%llu %s failed to read back",
          (unsigned long long) read_errors,
          plural (read_errors, "page", "pages"));
  if (io + enospc)
    warn (f, &count, "%llu backing file write %s (%llu for want of space): "
          "the pages stayed in RAM", (unsigned long long) (io + enospc),
          plural (io + enospc, "error", "errors"),
          (unsigned long long) enospc);
  if (checksum)
    warn (f, &count, "%llu backing file %s failed its checksum",
          (unsigned long long) checksum, plural (checksum, "read", "reads"));
  fputs (count ? "." : " No warnings.", f);
}

/* Prints TEXT folded at WRAP_COLUMNS, on spaces. */
static void
print_wrapped (const char *text)
{
  size_t column = 0;

  while (*text) {
    size_t word = strcspn (text, " ");

    if (column > 0 && column + 1 + word > WRAP_COLUMNS) {
      putchar ('\n');
      column = 0;
    }
    else if (column > 0) {
      putchar (' ');
      column++;
    }
    for (size_t i = 0; i < word; i++)
      putchar (text[i] == UNBREAKABLE_SPACE ? ' ' : text[i]);
    column += word;
    text += word;
    text += strspn (text, " ");
  }
  putchar ('\n');
}

void
print_status (const struct target *targets, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    const struct target *t = &targets[i];
    unsigned full_percent, backing_percent;
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream (&text, &len);

    if (f == NULL)
      die (EXIT_FAILURE, "open_memstream: %m");
    swap_sentence (f, t, &full_percent);
    memory_sentence (f, t->reply);
    backing_sentence (f, t->reply, &backing_percent);
    warnings (f, t->reply, full_percent, backing_percent);
    if (fclose (f) != 0)
      die (EXIT_FAILURE, "open_memstream: %m");
    if (i > 0)
      putchar ('\n');
    print_wrapped (text);
    free (text);
  }
}
