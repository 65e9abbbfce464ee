/* cswap: daemon/options — the defaults that follow the machine.  Without
 * a reserve= the reserve is min(ram / 64, 8) MiB, rounded down to pages:
 * a small machine keeps little warm memory, a large one 8 MiB.  A
 * reserve= given in any form (a size, 0 for none, a percentage of RAM)
 * is kept as given.  With a backing file and no pool-limit= the pool is
 * limited to a fifth of the RAM, and the options say it is the default;
 * a pool-limit= given (0, none, included) is kept, and without a backing
 * file there is no limit (issue 63).  backing=none is no backing file.
 * The writeback budget likewise: 16 GiB a day with a backing file and no
 * writeback-limit=, as given otherwise.
 * The RAM is CSWAP_TEST_RAM_MIB's.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "options.h"
#include "tap.h"

#define MIB (UINT64_C (1) << 20)

/* The reserve options_finish leaves on a machine of RAM_MIB MiB with
 * reserve=VALUE (NULL: none given), or UINT64_MAX if it failed.
 */
static uint64_t
reserve_with (const char *ram_mib, const char *value)
{
  struct cswap_options options;
  const char *why = NULL;

  setenv ("CSWAP_TEST_RAM_MIB", ram_mib, 1);
  options_init (&options);
  if (value && options_set (&options, "reserve", value, &why) == -1) {
    diag ("reserve=%s: %s", value, why);
    return UINT64_MAX;
  }
  if (options_finish (&options, &why) == -1) {
    diag ("options_finish: %s", why);
    return UINT64_MAX;
  }
  return options.store.reserve_bytes;
}

static void
expect (const char *ram_mib, const char *value, uint64_t bytes)
{
  uint64_t got = reserve_with (ram_mib, value);

  ok (got == bytes, "%s MiB of RAM, reserve=%s: %" PRIu64 " bytes (%" PRIu64 ")",
      ram_mib, value ? value : "(none)", bytes, got);
}

/* The pool limit options_finish leaves on a machine of RAM_MIB MiB with
 * the KEY=VALUE pairs in PAIRS (NULL-ended), or UINT64_MAX if it failed;
 * *BY_DEFAULT says whether the options call it the default.
 */
static uint64_t
pool_limit_with (const char *ram_mib, const char *const *pairs,
                 bool *by_default)
{
  struct cswap_options options;
  const char *why = NULL;

  setenv ("CSWAP_TEST_RAM_MIB", ram_mib, 1);
  options_init (&options);
  for (; pairs[0]; pairs += 2)
    if (options_set (&options, pairs[0], pairs[1], &why) == -1) {
      diag ("%s=%s: %s", pairs[0], pairs[1], why);
      return UINT64_MAX;
    }
  if (options_finish (&options, &why) == -1) {
    diag ("options_finish: %s", why);
    return UINT64_MAX;
  }
  *by_default = options.store.pool_limit_default;
  return options.store.pool_limit_bytes;
}

static void
expect_pool_limit (const char *what, const char *ram_mib,
                   const char *const *pairs, uint64_t bytes, bool by_default)
{
  bool got_default = !by_default;
  uint64_t got = pool_limit_with (ram_mib, pairs, &got_default);

  ok (got == bytes && got_default == by_default,
      "%s MiB of RAM, %s: pool limit %" PRIu64 " bytes%s (%" PRIu64 "%s)",
      ram_mib, what, bytes, by_default ? ", the default" : "",
      got, got_default ? ", the default" : "");
}

static void
pool_limit_defaults (void)
{
  static const char *const backing[] = { "backing", "/x/backing", NULL };
  static const char *const none[] = { NULL };
  static const char *const given[] = {
    "backing", "/x/backing", "pool-limit", "64M", NULL };
  static const char *const zero[] = {
    "backing", "/x/backing", "pool-limit", "0", NULL };
  static const char *const off[] = {
    "backing", "/x/backing", "backing", "none", NULL };
  static const char *const given_first[] = {
    "pool-limit", "25%", "backing", "/x/backing", NULL };

  /* 210 MiB (a 256 MiB VM's MemTotal) / 5 = 42 MiB. */
  expect_pool_limit ("a backing file", "210", backing, 42 * MIB, true);
  /* 24576 / 5 = 4915.2 MiB, rounded down to pages. */
  expect_pool_limit ("a backing file", "24576", backing,
                     24576 * MIB / 5 / 4096 * 4096, true);
  expect_pool_limit ("no backing file", "210", none, 0, false);
  expect_pool_limit ("pool-limit=64M", "210", given, 64 * MIB, false);
  expect_pool_limit ("pool-limit=0", "210", zero, 0, false);
  expect_pool_limit ("backing=none", "210", off, 0, false);
  expect_pool_limit ("pool-limit=25% before backing", "1000", given_first,
                     250 * MIB, false);
}

/* The writeback budget options_finish leaves with PAIRS, or UINT64_MAX. */
static uint64_t
writeback_limit_with (const char *const *pairs, bool *by_default)
{
  struct cswap_options options;
  const char *why = NULL;

  setenv ("CSWAP_TEST_RAM_MIB", "210", 1);
  options_init (&options);
  for (; pairs[0]; pairs += 2)
    if (options_set (&options, pairs[0], pairs[1], &why) == -1)
      return UINT64_MAX;
  if (options_finish (&options, &why) == -1)
    return UINT64_MAX;
  *by_default = options.writeback_limit_default;
  return options.store.writeback_budget.limit_bytes_per_day;
}

static void
writeback_limit_defaults (void)
{
  static const char *const backing[] = { "backing", "/x/backing", NULL };
  static const char *const none[] = { NULL };
  static const char *const zero[] = {
    "backing", "/x/backing", "writeback-limit", "0", NULL };
  static const char *const given[] = {
    "writeback-limit", "1G", "backing", "/x/backing", NULL };
  bool by_default = false;

  ok (writeback_limit_with (backing, &by_default) == 16 * 1024 * MIB
      && by_default, "a backing file: writeback-limit 16 GiB a day, the default");
  ok (writeback_limit_with (none, &by_default) == 0 && !by_default,
      "no backing file: no writeback budget");
  ok (writeback_limit_with (zero, &by_default) == 0 && !by_default,
      "writeback-limit=0: none, as given");
  ok (writeback_limit_with (given, &by_default) == 1024 * MIB && !by_default,
      "writeback-limit=1G: kept");
}

int
main (void)
{
  /* 107 MiB (a 160 MiB VM's MemTotal) / 64 = 1.671875 MiB = 428 pages. */
  expect ("107", NULL, 428 * 4096);
  expect ("64", NULL, 1 * MIB);
  expect ("511", NULL, 511 * MIB / 64 / 4096 * 4096);
  expect ("512", NULL, 8 * MIB);
  expect ("24576", NULL, 8 * MIB);
  expect ("107", "0", 0);
  expect ("24576", "4M", 4 * MIB);
  expect ("107", "16M", 16 * MIB);
  expect ("1000", "1%", 10 * MIB);
  expect ("2048", "min(ram / 128, 4)", 4 * MIB);
  ok (reserve_with ("107", "8X") == UINT64_MAX, "reserve=8X is refused");
  pool_limit_defaults ();
  writeback_limit_defaults ();
  return tap_done ();
}
