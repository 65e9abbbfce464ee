/* cswap tests: a store with a backing file made afresh — the file of an
 * earlier run removed first, since a new store writes over it anyway and
 * an old one of another size would be taken as it is — or the test
 * stopped, saying why.
 */
#ifndef CSWAP_TEST_BACKED_STORE_H
#define CSWAP_TEST_BACKED_STORE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pagefile.h"
#include "store.h"
#include "tap.h"

/* A test's start: CORPUS loaded from $CSWAP_CORPUS (else the whole test
 * is skipped), and PATH (BYTES) a backing file named NAME.PID under
 * $CSWAP_TIER_DIR, or /var/tmp (it needs O_DIRECT, which tmpfs may not
 * have).
 */
__attribute__ ((unused))
static void
backed_store_setup (struct pagefile *corpus, char *path, size_t bytes,
                    const char *name)
{
  const char *corpus_path = getenv ("CSWAP_CORPUS");
  const char *dir = getenv ("CSWAP_TIER_DIR");

  if (corpus_path == NULL || pagefile_load (corpus_path, corpus) == -1)
    tap_skip_all ("no corpus (set CSWAP_CORPUS)");
  snprintf (path, bytes, "%s/%s.%d", dir ? dir : "/var/tmp", name,
            (int) getpid ());
}

__attribute__ ((unused))
static struct store *
backed_store_create (const struct store_config *config)
{
  struct store *store;

  unlink (config->backing_path);
  store = store_create (config);
  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  return store;
}

#endif /* CSWAP_TEST_BACKED_STORE_H */
