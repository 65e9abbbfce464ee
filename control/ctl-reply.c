/* cswapctl: errors, the members of a reply, figures worked out from
 * them, and numbers as text.
 *
 * Sizes read as zramctl's table does ("1.2G", "64M", "512B": one decimal,
 * dropped when it is 0), as prose ("1.2 GiB"), or as exact bytes.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "cswapctl.h"
#include "page.h"
#include "program-message.h"

void
die (int status, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  program_message_v (PROGRAM_NAME, fmt, ap);
  va_end (ap);
  exit (status);
}

json_object *
member (json_object *o, const char *key)
{
  json_object *value;

  if (!json_object_object_get_ex (o, key, &value))
    die (EXIT_DAEMON_ERROR, "the daemon's reply has no \"%s\"", key);
  return value;
}

uint64_t
member_uint (json_object *o, const char *key)
{
  return json_object_get_uint64 (member (o, key));
}

double
member_double (json_object *o, const char *key)
{
  return json_object_get_double (member (o, key));
}

/* The pool's peak (zram's mem_used_max) with the metadata as it is now,
 * which only grows with the pages stored: never below memory_used_bytes.
 */
uint64_t
stats_memory_peak (json_object *stats)
{
  uint64_t peak = member_uint (stats, "pool_peak_bytes");
  uint64_t pool = member_uint (stats, "pool_bytes");

  return (peak > pool ? peak : pool) + member_uint (stats, "metadata_bytes");
}

uint64_t
stats_on_disk (json_object *stats)
{
  return member_uint (stats, "tiered_pages") * CSWAP_PAGE_SIZE;
}

uint64_t
stats_stale (json_object *stats)
{
  uint64_t used = member_uint (stats, "backing_used_bytes");
  uint64_t live = member_uint (stats, "backing_live_bytes");

  return used > live ? used - live : 0;
}

void
format_size (char out[SIZE_TEXT_MAX], uint64_t bytes, enum size_style style)
{
  static const char units[] = "KMGTPE";
  double value = bytes;
  size_t u = 0;
  int len;

  if (style == SIZE_BYTES || bytes < 1024) {
    snprintf (out, SIZE_TEXT_MAX, style == SIZE_LONG ? "%llu B" : "%llu%s",
              (unsigned long long) bytes, style == SIZE_SHORT ? "B" : "");
    return;
  }
  /* Up a unit when one decimal would round to 1024.0. */
  for (value /= 1024; value >= 1023.95 && u + 1 < sizeof units - 1; u++)
    value /= 1024;
  if (style == SIZE_LONG) {
    snprintf (out, SIZE_TEXT_MAX, "%.1f %ciB", value, units[u]);
    return;
  }
  len = snprintf (out, SIZE_TEXT_MAX, "%.1f", value);
  if (len >= 2 && out[len - 1] == '0' && out[len - 2] == '.')
    len -= 2;
  snprintf (out + len, SIZE_TEXT_MAX - len, "%c", units[u]);
}

void
format_duration (char out[SIZE_TEXT_MAX], double seconds)
{
  unsigned long long s = seconds > 0 ? (unsigned long long) seconds : 0;

  if (s >= 86400)
    snprintf (out, SIZE_TEXT_MAX, "%llud%02lluh", s / 86400, s % 86400 / 3600);
  else if (s >= 3600)
    snprintf (out, SIZE_TEXT_MAX, "%lluh%02llum", s / 3600, s % 3600 / 60);
  else if (s >= 60)
    snprintf (out, SIZE_TEXT_MAX, "%llum%02llus", s / 60, s % 60);
  else
    snprintf (out, SIZE_TEXT_MAX, "%llus", s);
}
