/* cswap: daemon/options — the defaults that follow the machine.  Without
 * a reserve= the reserve is min(ram / 64, 8) MiB, rounded down to pages:
 * a small machine keeps little warm memory, a large one 8 MiB.  A
 * reserve= given in any form (a size, 0 for none, a percentage of RAM)
 * is kept as given.  The RAM is CSWAP_TEST_RAM_MIB's.
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
  return tap_done ();
}
