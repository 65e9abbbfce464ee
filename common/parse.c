/* cswap: checked number parsers (see parse.h). */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "page.h"
#include "parse.h"
#include "size-expr.h"

/* Parses leading decimal digits of S without sign; sets *END. */
static int
parse_digits (const char *s, uint64_t *value, const char **end,
              const char **why)
{
  if (!isdigit ((unsigned char) *s)) {
    *why = "expected a number";
    return -1;
  }
  errno = 0;
  char *e;
  unsigned long long v = strtoull (s, &e, 10);
  if (errno == ERANGE) {
    *why = "number too large";
    return -1;
  }
  *value = v;
  *end = e;
  return 0;
}

int
parse_size (const char *s, uint64_t *bytes, const char **why)
{
  static const char suffixes[] = "KMGTPE";
  uint64_t value;
  const char *end;
  unsigned shift = 0;

  if (parse_digits (s, &value, &end, why) == -1)
    return -1;
  if (*end) {
    const char *p = strchr (suffixes, toupper ((unsigned char) *end));
    if (p == NULL) {
      *why = "unknown size suffix (use K, M, G, T, P or E)";
      return -1;
    }
    shift = 10 * (p - suffixes + 1);
    end++;
    if (strcmp (end, "iB") == 0 || strcmp (end, "B") == 0)
      end += strlen (end);
    if (*end) {
      *why = "trailing characters after the size";
      return -1;
    }
  }
  if (shift && value > (UINT64_MAX >> shift)) {
    *why = "size too large";
    return -1;
  }
  *bytes = value << shift;
  return 0;
}

/* BYTES as parse_size reads it: with the largest suffix that divides it. */
static void
size_text (char out[24], uint64_t bytes)
{
  static const char suffixes[] = "KMGTPE";
  unsigned n = 0;

  while (bytes && n < sizeof suffixes - 1 && bytes % 1024 == 0) {
    bytes /= 1024;
    n++;
  }
  /* The suffix as a string of its own: gcc 12's printf checker crashes
   * at -O0 (debug builds) on a conditional pointer into SUFFIXES.
   */
  char suffix[2] = { n ? suffixes[n - 1] : '\0', '\0' };
  snprintf (out, 24, "%" PRIu64 "%s", bytes, suffix);
}

int
parse_size_or_zero (const char *s, uint64_t min, uint64_t max,
                    uint64_t *bytes, const char **why)
{
  static _Thread_local char reason[80];
  char low[24], high[24];
  uint64_t value;

  if (parse_size (s, &value, why) == -1)
    return -1;
  if (value != 0 && (value < min || value > max)) {
    size_text (low, min);
    size_text (high, max);
    snprintf (reason, sizeof reason, "size out of range (0, or %s..%s)",
              low, high);
    *why = reason;
    return -1;
  }
  *bytes = value;
  return 0;
}

int
parse_size_or_percent (const char *s, uint64_t total, uint64_t *bytes,
                       const char **why)
{
  size_t len = strlen (s);

  if (len == 0 || s[len - 1] != '%')
    return parse_size (s, bytes, why);
  if (!isdigit ((unsigned char) s[0])) {
    *why = "expected a percentage";
    return -1;
  }
  char *end;
  double percent = strtod (s, &end);
  if (end != s + len - 1 || !(percent >= 0 && percent <= 100)) {
    *why = "percentage must be a number from 0 to 100";
    return -1;
  }
  *bytes = (uint64_t) ((double) total * percent / 100.0);
  return 0;
}

/* "number out of range (MIN..MAX)", in a buffer of the calling thread's:
 * the reason says what would have been taken.
 */
static const char *
out_of_range (const char *min, const char *max)
{
  static _Thread_local char reason[80];

  snprintf (reason, sizeof reason, "number out of range (%s..%s)", min, max);
  return reason;
}

static const char *
out_of_uint64_range (uint64_t min, uint64_t max)
{
  char low[24], high[24];

  snprintf (low, sizeof low, "%" PRIu64, min);
  snprintf (high, sizeof high, "%" PRIu64, max);
  return out_of_range (low, high);
}

static const char *
out_of_int64_range (int64_t min, int64_t max)
{
  char low[24], high[24];

  snprintf (low, sizeof low, "%" PRId64, min);
  snprintf (high, sizeof high, "%" PRId64, max);
  return out_of_range (low, high);
}

int
parse_uint64 (const char *s, uint64_t min, uint64_t max, uint64_t *value,
              const char **why)
{
  uint64_t v;
  const char *end;

  if (parse_digits (s, &v, &end, why) == -1)
    return -1;
  if (*end) {
    *why = "trailing characters after the number";
    return -1;
  }
  if (v < min || v > max) {
    *why = out_of_uint64_range (min, max);
    return -1;
  }
  *value = v;
  return 0;
}

int
parse_int64 (const char *s, int64_t min, int64_t max, int64_t *value,
             const char **why)
{
  bool negative = *s == '-';
  uint64_t magnitude;
  const char *end;

  if (parse_digits (s + negative, &magnitude, &end, why) == -1)
    return -1;
  if (*end) {
    *why = "trailing characters after the number";
    return -1;
  }
  /* The magnitude first: past INT64_MAX the conversion is not defined. */
  if (magnitude <= (uint64_t) INT64_MAX) {
    int64_t v = negative ? -(int64_t) magnitude : (int64_t) magnitude;
    if (v >= min && v <= max) {
      *value = v;
      return 0;
    }
  }
  *why = out_of_int64_range (min, max);
  return -1;
}

int
parse_choice (const char *s, const char *const *names, unsigned count,
              unsigned *index, const char **why)
{
  static _Thread_local char reason[128];
  size_t used;

  for (unsigned i = 0; i < count; i++)
    if (strcmp (s, names[i]) == 0) {
      *index = i;
      return 0;
    }
  used = snprintf (reason, sizeof reason, "use %s", names[0]);
  for (unsigned i = 1; i < count && used < sizeof reason; i++)
    used += snprintf (reason + used, sizeof reason - used, "%s%s",
                      i + 1 < count ? ", " : " or ", names[i]);
  *why = reason;
  return -1;
}

int
parse_either (const char *s, const char *first, const char *second,
              bool *is_second, const char **why)
{
  const char *const names[] = { first, second };
  unsigned index;

  if (parse_choice (s, names, 2, &index, why) == -1)
    return -1;
  *is_second = index == 1;
  return 0;
}

int
parse_yes_no (const char *s, bool *value, const char **why)
{
  static const char *const yes[] = { "yes", "true", "on", "1" };
  static const char *const no[] = { "no", "false", "off", "0" };

  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (strcmp (s, yes[i]) == 0) {
      *value = true;
      return 0;
    }
    if (strcmp (s, no[i]) == 0) {
      *value = false;
      return 0;
    }
  }
  *why = "use yes or no";
  return -1;
}

/* This machine's memory: sysconf's (the kernel's MemTotal), or for tests
 * CSWAP_TEST_RAM_MIB's, so that a size that follows the machine can be
 * checked on any machine.
 */
static int
machine_ram_bytes (uint64_t *bytes, const char **why)
{
  const char *test_mib = getenv ("CSWAP_TEST_RAM_MIB");
  long pages, page_size;
  uint64_t mib;

  if (test_mib) {
    /* 2^44 MiB (16 EiB) is the most a 64-bit count of bytes holds. */
    if (parse_uint64 (test_mib, 1, (UINT64_C (1) << 44) - 1, &mib, why) == -1) {
      *why = "CSWAP_TEST_RAM_MIB: expected a number of MiB";
      return -1;
    }
    *bytes = mib << 20;
    return 0;
  }
  pages = sysconf (_SC_PHYS_PAGES);
  page_size = sysconf (_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) {
    *why = "the machine's memory size is unknown";
    return -1;
  }
  *bytes = (uint64_t) pages * page_size;
  return 0;
}

/* Digits with an optional suffix and nothing else: parse_size()'s to
 * judge, and an expression never.
 */
static bool
is_plain_size (const char *s)
{
  size_t len = strlen (s);

  if (!isdigit ((unsigned char) s[0]))
    return false;
  for (size_t i = 0; i < len; i++)
    if (!isalnum ((unsigned char) s[i]))
      return false;
  return true;
}

int
parse_memory_size (const char *s, uint64_t *bytes, const char **why)
{
  size_t len = strlen (s);
  uint64_t ram;

  if (is_plain_size (s))
    return parse_size (s, bytes, why);
  if (machine_ram_bytes (&ram, why) == -1)
    return -1;
  if (len > 0 && s[len - 1] == '%') {
    if (parse_size_or_percent (s, ram, bytes, why) == -1)
      return -1;
    *bytes = *bytes / CSWAP_PAGE_SIZE * CSWAP_PAGE_SIZE;
    return 0;
  }
  return size_expr_bytes (s, ram, bytes, why);
}

int
parse_pool_limit (const char *s, uint64_t *bytes, const char **why)
{
  uint64_t limit;

  if (parse_memory_size (s, &limit, why) == -1)
    return -1;
  /* A percentage or an expression is rounded down to whole pages: to 0
   * when it is less than one, which would be no limit at all.
   */
  if ((limit > 0 && limit < CSWAP_PAGE_SIZE)
      || (limit == 0 && !is_plain_size (s))) {
    *why = "less than 4096 bytes, the smallest limit (0 is none)";
    return -1;
  }
  *bytes = limit;
  return 0;
}
