/* cswap: a minimal TAP producer for C tests (meson test protocol 'tap').
 *
 * ok(cond, fmt, ...) prints "ok N - name" or "not ok N - name"; a test
 * program ends with tap_done(), which prints the plan and returns the exit
 * status.  tap_skip_all() reports the whole program as skipped: the plan
 * "1..0 # SKIP why" and exit 0, since meson (1.0.1, Debian 12's) counts a
 * TAP test that exits 77 as an error, not a skip.  Diagnostics go to
 * stdout as "# ..." lines.
 */
#ifndef CSWAP_TAP_H
#define CSWAP_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned tap_count, tap_failed;

__attribute__ ((format (printf, 2, 3), unused))
static bool
ok (bool cond, const char *fmt, ...)
{
  va_list ap;

  tap_count++;
  if (!cond)
    tap_failed++;
  printf ("%sok %u - ", cond ? "" : "not ", tap_count);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  return cond;
}

__attribute__ ((format (printf, 1, 2), unused))
static void
diag (const char *fmt, ...)
{
  va_list ap;

  fputs ("# ", stdout);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
}

__attribute__ ((noreturn, unused))
static void
tap_skip_all (const char *why)
{
  printf ("1..0 # SKIP %s\n", why);
  exit (0);
}

/* Stops the test at once: for set-up failures after which nothing that
 * follows would mean anything.
 */
__attribute__ ((noreturn, format (printf, 1, 2), unused))
static void
tap_bail_out (const char *fmt, ...)
{
  va_list ap;

  fputs ("Bail out! ", stdout);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  exit (1);
}

__attribute__ ((unused))
static int
tap_done (void)
{
  printf ("1..%u\n", tap_count);
  return tap_failed ? 1 : 0;
}

#endif /* CSWAP_TAP_H */
