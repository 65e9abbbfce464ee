/* cswap: `exports [NAME [drop]]` on the nbdkit plugin's control socket —
 * each export's size, quota, clients and counters (store_area_stats), for
 * cswapctl exports; with drop, NAME's pages freed first
 * (nbd_exports_drop).  And the same numbers in `metrics`, a series per
 * export labelled with its name.  A control extension (control.h): control/ dispatches it and
 * knows nothing of exports.
 *
 * Locking: none of its own; entries below the table's count never
 * change (nbd-exports.h), and the counters are relaxed atomics.
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
  json_uint (reply, "clients", nbd_exports_clients (view.exports, e));
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

/* `metrics`: each export's numbers, a series per export labelled
 * export="NAME", from its area's counters (store_area_stats).
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

static void
write_sample (FILE *f, const char *name, const char *suffix,
              const struct nbd_export *e, uint64_t value)
{
  fprintf (f, "cswap_export_%s%s{export=\"", name, suffix);
  write_label_value (f, e->name);
  fprintf (f, "\"} %" PRIu64 "\n", value);
}

static void
write_metrics (void *arg, FILE *f)
{
  struct nbd_exports *exports = view.exports;
  unsigned count = exports->count;
  struct store_area_stats s;

  (void) arg;
  for (size_t m = 0; m < sizeof export_metrics / sizeof export_metrics[0];
       m++) {
    const struct export_metric *metric = &export_metrics[m];
    const char *suffix = metric->counter ? "_total" : "";

    write_family_head (f, metric->name, suffix,
                       metric->counter ? "counter" : "gauge", metric->help);
    for (unsigned i = 0; i < count; i++) {
      uint64_t value;

      store_area_stats (view.store, exports->list[i].area, &s);
      memcpy (&value, (const char *) &s + metric->offset, sizeof value);
      write_sample (f, metric->name, suffix, &exports->list[i], value);
    }
  }
  write_family_head (f, "clients", "", "gauge",
                     "Clients connected to an export.");
  for (unsigned i = 0; i < count; i++)
    write_sample (f, "clients", "", &exports->list[i],
                  nbd_exports_clients (exports, &exports->list[i]));
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
