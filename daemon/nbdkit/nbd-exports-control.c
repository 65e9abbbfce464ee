/* cswap: `exports [NAME [drop]]` on the nbdkit plugin's control socket —
 * each export's size, quota, clients and counters (store_area_stats), for
 * cswapctl exports; with drop, NAME's pages freed first
 * (nbd_exports_drop).  And the same numbers in `metrics`, a series per
 * export labelled with its name.  With export-list=no, an export is
 * shown and labelled by its id, never its name, and NAME may be either
 * (nbd_export_is_named): the socket may be a monitoring user's
 * (ctl-uid), and the metrics are scraped and kept.  A control extension
 * (control.h): control/ dispatches it and knows nothing of exports.
 *
 * Locking: none of its own; names are read inside nbd_exports_each,
 * under the table's claim_lock, and the counters are relaxed atomics.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "nbd-exports-control.h"

static struct nbd_exports_view {
  struct nbd_exports *exports;
  struct store *store;
} view;

/* What `exports [NAME]` lists, row by row (nbd_exports_each). */
struct listing {
  const char *name;             /* NULL: every export */
  struct json *reply;
  unsigned shown;
};

static int
show_export (void *arg, const struct nbd_export *e)
{
  struct listing *listing = arg;
  struct json *reply = listing->reply;
  struct store_area_stats s;

  if (listing->name && !nbd_export_is_named (view.exports, e, listing->name))
    return 0;
  listing->shown++;
  store_area_stats (view.store, e->area, &s);
  json_object_begin (reply, NULL);
  json_string (reply, "name", e->label);
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
  json_uint (reply, "clients", e->connections);
  json_object_end (reply);
  return listing->name != NULL; /* one export has one name */
}

static int
run_exports (void *arg, unsigned argc, char *const *argv, struct json *reply,
             char *error, size_t size)
{
  struct listing listing = { argc >= 1 ? argv[0] : NULL, reply, 0 };

  (void) arg;
  if (argc == 2) {
    const char *why;

    if (strcmp (argv[1], "drop") != 0) {
      snprintf (error, size, "exports NAME [drop]: not %s", argv[1]);
      return -1;
    }
    if (nbd_exports_drop (view.exports, view.store, argv[0], &why)) {
      snprintf (error, size, "%s", why);
      return -1;
    }
  }
  json_array_begin (reply, "exports");
  nbd_exports_each (view.exports, show_export, &listing);
  json_array_end (reply);
  if (listing.name && listing.shown == 0 && argc < 2) {
    snprintf (error, size, "no export named %s", listing.name);
    return -1;
  }
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

/* `metrics`: each export's numbers, a series per export labelled
 * export="NAME" (or its id, with export-list=no), from its area's counters (store_area_stats).
 */
static const struct export_metric {
  const char *name;             /* the metric cswap_export_NAME */
  bool counter;                 /* only goes up: cswap_export_NAME_total */
  size_t offset;                /* of a uint64_t in store_area_stats */
  const char *help;
} export_metrics[] = {
#define AREA(member) offsetof (struct store_area_stats, member)
  { "pages_stored", false, AREA (pages_stored),
    "Pages an export holds: same-filled, compressed, raw and tiered." },
  { "tiered_pages", false, AREA (tiered_pages),
    "An export's pages in the backing file." },
  { "compressed_bytes", false, AREA (compressed_bytes),
    "Pool memory an export's pages take: what its quota counts." },
  { "limit_bytes", false, AREA (limit_bytes),
    "An export's quota (0: none but the pool's limit)." },
  { "reads", true, AREA (reads), "Page reads of an export." },
  { "writes", true, AREA (writes), "Page writes to an export." },
  { "trims", true, AREA (trims), "Pages of an export trimmed or zeroed." },
  { "failed_writes", true, AREA (failed_writes),
    "Page writes to an export refused: at its quota or the pool's limit." },
  { "quota_refusals", true, AREA (area_limit_hits),
    "Page writes to an export refused at its own quota." },
#undef AREA
};

/* NAME as a Prometheus label value: backslash, quote and newline escaped. */
static void
write_label_value (FILE *f, const char *name)
{
  for (const char *c = name; *c; c++) {
    if (*c == '\\' || *c == '"')
      fputc ('\\', f);
    if (*c == '\n')
      fputs ("\\n", f);
    else
      fputc (*c, f);
  }
}

static void
write_family_head (FILE *f, const char *name, const char *suffix,
                   const char *type, const char *help)
{
  fprintf (f, "# HELP cswap_export_%s%s %s\n# TYPE cswap_export_%s%s %s\n",
           name, suffix, help, name, suffix, type);
}

/* One metric's samples, export by export (nbd_exports_each). */
struct samples {
  FILE *f;
  const struct export_metric *metric; /* NULL: clients */
};

static int
write_sample (void *arg, const struct nbd_export *e)
{
  const struct samples *samples = arg;
  const struct export_metric *metric = samples->metric;
  uint64_t value = e->connections;
  struct store_area_stats s;

  if (metric) {
    store_area_stats (view.store, e->area, &s);
    memcpy (&value, (const char *) &s + metric->offset, sizeof value);
  }
  fprintf (samples->f, "cswap_export_%s%s{export=\"",
           metric ? metric->name : "clients",
           metric && metric->counter ? "_total" : "");
  write_label_value (samples->f, e->label);
  fprintf (samples->f, "\"} %" PRIu64 "\n", value);
  return 0;
}

static void
write_metrics (void *arg, FILE *f)
{
  (void) arg;
  for (size_t m = 0; m < sizeof export_metrics / sizeof export_metrics[0];
       m++) {
    const struct export_metric *metric = &export_metrics[m];
    struct samples samples = { f, metric };

    write_family_head (f, metric->name, metric->counter ? "_total" : "",
                       metric->counter ? "counter" : "gauge", metric->help);
    nbd_exports_each (view.exports, write_sample, &samples);
  }
  write_family_head (f, "clients", "", "gauge",
                     "Clients connected to an export.");
  nbd_exports_each (view.exports, write_sample,
                    &(struct samples) { f, NULL });
}
static const struct control_extension extension = {
  .command = "exports",
  .args = "[NAME [drop]]",
  .help = "the exports (export=): size, quota, pages and bytes held, "
    "requests; drop: free NAME's pages (no client may have it open)",
  .min_args = 0, .max_args = 2, .run = run_exports,
  .read_only_max_args = 1,      /* `exports [NAME]` lists; drop changes */
  .numbers = numbers,
  .number_count = sizeof numbers / sizeof numbers[0],
  .read_numbers = read_numbers,
  .write_metrics = write_metrics,
};

const struct control_extension *
nbd_exports_control_extension (struct nbd_exports *exports,
                               struct store *store)
{
  view = (struct nbd_exports_view) { exports, store };
  return &extension;
}
