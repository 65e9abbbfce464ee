/* cswap: where each key came from (see config-origins.h).
 *
 * A small table, one entry per key, in the order keys were first given;
 * a later file's value replaces the entry's value and place but keeps its
 * position, so the listing reads like the file most people have.
 *
 * Locking: none; called once, single-threaded, before any thread starts.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config-origins.h"

void
config_origins_init (struct config_origins *origins)
{
  *origins = (struct config_origins) { 0 };
}

static void
free_origin (struct config_origin *origin)
{
  free (origin->key);
  free (origin->value);
  free (origin->path);
}

void
config_origins_free (struct config_origins *origins)
{
  for (size_t i = 0; i < origins->count; i++)
    free_origin (&origins->keys[i]);
  free (origins->main_path);
  config_dropins_free (&origins->dropins);
  config_origins_init (origins);
}

const struct config_origin *
config_origins_find (const struct config_origins *origins, const char *key)
{
  for (size_t i = 0; i < origins->count; i++)
    if (strcmp (origins->keys[i].key, key) == 0)
      return &origins->keys[i];
  return NULL;
}

int
config_origins_note (struct config_origins *origins, const char *key,
                     const char *value, const char *path, unsigned line,
                     const char **why)
{
  struct config_origin *origin =
    (struct config_origin *) config_origins_find (origins, key);
  struct config_origin noted = {
    .key = strdup (key), .value = strdup (value), .path = strdup (path),
    .line = line,
  };

  if (noted.key == NULL || noted.value == NULL || noted.path == NULL) {
    free_origin (&noted);
    *why = "out of memory";
    return -1;
  }
  if (origin == NULL) {
    if (origins->count == CONFIG_MAX_KEYS) {
      free_origin (&noted);
      *why = "too many keys";
      return -1;
    }
    origin = &origins->keys[origins->count++];
  }
  else
    free_origin (origin);
  *origin = noted;
  return 0;
}

/* ", 4096 MiB": what a size comes to, in the largest unit it fills. */
static void
print_amount (FILE *out, uint64_t bytes)
{
  if (bytes % (1 << 20) == 0)
    fprintf (out, ", %" PRIu64 " MiB", bytes >> 20);
  else if (bytes % 1024 == 0)
    fprintf (out, ", %" PRIu64 " KiB", bytes >> 10);
  else
    fprintf (out, ", %" PRIu64 " bytes", bytes);
}

static void
print_files (FILE *out, const struct config_origins *origins)
{
  fprintf (out, "# %s\n", origins->main_path);
  for (size_t i = 0; i < origins->dropins.count; i++) {
    const struct config_dropin *dropin = &origins->dropins.items[i];

    fprintf (out, "# %s", dropin->path);
    if (dropin->masked)
      fprintf (out, ": linked to /dev/null%s%s", dropin->hidden ? ", masks " : "",
               dropin->hidden ? dropin->hidden : "");
    else if (dropin->hidden)
      fprintf (out, ": replaces %s", dropin->hidden);
    fputc ('\n', out);
  }
}

void
config_origins_print (FILE *out, const struct config_origins *origins,
                      const struct cswap_options *options)
{
  const struct store_config *store = &options->store;

  print_files (out, origins);
  if (config_origins_find (origins, "size") == NULL) {
    fprintf (out, "size = %s  # default", options_default_size);
    print_amount (out, store->size_bytes);
    fputc ('\n', out);
  }
  if (store->pool_limit_default) {
    fprintf (out, "pool-limit = %s  # default with a backing file",
             options_default_pool_limit);
    print_amount (out, store->pool_limit_bytes);
    fputc ('\n', out);
  }
  if (options->writeback_limit_default)
    fprintf (out, "writeback-limit = %s  # default with a backing file\n",
             options_default_writeback_limit);
  for (size_t i = 0; i < origins->count; i++) {
    const struct config_origin *origin = &origins->keys[i];

    fprintf (out, "%s = %s  # %s:%u", origin->key, origin->value,
             origin->path, origin->line);
    if (strcmp (origin->key, "size") == 0)
      print_amount (out, store->size_bytes);
    else if (strcmp (origin->key, "pool-limit") == 0
             && store->pool_limit_bytes)
      print_amount (out, store->pool_limit_bytes);
    fputc ('\n', out);
  }
}
