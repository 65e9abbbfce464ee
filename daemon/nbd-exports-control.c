/* cswap: `exports [NAME [drop]]` on the nbdkit plugin's control socket —
 * each export's size, quota and counters (store_area_stats), for
 * cswapctl exports; with drop, NAME's pages freed first
 * (nbd_exports_drop).  A control extension (control.h): control/ dispatches it and
 * knows nothing of exports.
 *
 * Locking: none of its own; entries below the table's count never
 * change (nbd-exports.h), and the counters are relaxed atomics.
 */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "nbd-exports-control.h"

static struct nbd_exports_view {
  struct nbd_exports *exports;
  struct store *store;
} view;

static void
show_export (const struct nbd_export *e, struct json *reply)
{
  struct store_area_stats s;

  store_area_stats (view.store, e->area, &s);
  json_object_begin (reply, NULL);
  json_string (reply, "name", e->name);
  json_uint (reply, "size_bytes", store_area_size (view.store));
  json_uint (reply, "limit_bytes", s.limit_bytes);
  json_uint (reply, "pages_stored", s.pages_stored);
  json_uint (reply, "same_filled_pages", s.same_filled_pages);
  json_uint (reply, "tiered_pages", s.tiered_pages);
  json_uint (reply, "compressed_bytes", s.compressed_bytes);
  json_uint (reply, "reads", s.reads);
  json_uint (reply, "writes", s.writes);
  json_uint (reply, "trims", s.trims);
  json_uint (reply, "failed_writes", s.failed_writes);
  json_uint (reply, "quota_refusals", s.area_limit_hits);
  json_object_end (reply);
}

static int
run_exports (void *arg, unsigned argc, char *const *argv, struct json *reply,
             char *error, size_t size)
{
  struct nbd_exports *exports = view.exports;
  struct nbd_export *one = NULL;

  (void) arg;
  if (argc >= 1 && (one = nbd_exports_find (exports, argv[0])) == NULL) {
    snprintf (error, size, "no export named %s", argv[0]);
    return -1;
  }
  if (argc == 2) {
    const char *why;
    int r;

    if (strcmp (argv[1], "drop") != 0) {
      snprintf (error, size, "exports NAME [drop]: not %s", argv[1]);
      return -1;
    }
    r = nbd_exports_drop (exports, view.store, one,
                          &why);
    if (r) {
      snprintf (error, size, "%s", why);
      return -1;
    }
    fprintf (stderr, "cswap: export \"%s\" dropped by command\n",
             one->name);
  }
  unsigned count = exports->count;

  json_array_begin (reply, "exports");
  for (unsigned i = 0; i < count; i++)
    if (one == NULL || one == &exports->list[i])
      show_export (&exports->list[i], reply);
  json_array_end (reply);
  return 0;
}

/* For `stats` and `metrics`: the whole, beside the store's numbers. */
static const struct control_extension_number numbers[] = {
  { "exports", false,
    "Exports served: configured, and claimed from the template." },
  { "export_quota_refusals", true,
    "Page writes refused at their export's quota, all exports together "
    "(cswapctl exports: each one's)." },
};

static void
read_numbers (void *arg, uint64_t *values)
{
  struct store_area_stats s;

  (void) arg;
  unsigned count = view.exports->count;

  values[0] = count;
  values[1] = 0;
  for (unsigned i = 0; i < count; i++) {
    store_area_stats (view.store, view.exports->list[i].area, &s);
    values[1] += s.area_limit_hits;
  }
}

static const struct control_extension extension = {
  .command = "exports",
  .args = "[NAME [drop]]",
  .help = "the exports (export=): size, quota, pages and bytes held, "
    "requests; drop: free NAME's pages (no client may have it open)",
  .min_args = 0, .max_args = 2, .run = run_exports,
  .numbers = numbers,
  .number_count = sizeof numbers / sizeof numbers[0],
  .read_numbers = read_numbers,
};

const struct control_extension *
nbd_exports_control_extension (struct nbd_exports *exports,
                               struct store *store)
{
  view = (struct nbd_exports_view) { exports, store };
  return &extension;
}
