/* cswap tier: opens PATH as a backing file of 4 MiB, as the daemon does
 * (tier_open), and closes it: for test-tier-dio-warm.sh, which looks at
 * what the kernel set up meanwhile.  Exits 0, or 1 saying why not.
 */
#include <stdio.h>

#include "tier.h"

int
main (int argc, char **argv)
{
  struct tier_config config = {
    .path = argc == 2 ? argv[1] : NULL, .size_bytes = 4 << 20,
  };
  const char *why = NULL;
  struct tier *tier;

  if (config.path == NULL) {
    fprintf (stderr, "usage: tier-open-close PATH\n");
    return 1;
  }
  tier = tier_open (&config, &why);
  if (tier == NULL) {
    fprintf (stderr, "tier_open %s: %s\n", config.path, why);
    return 1;
  }
  tier_close (tier);
  return 0;
}
