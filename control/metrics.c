/* cswap: the counters of `stats` and `metrics`, from one table.
 *
 * Each row names a number once: its JSON member is NAME, its Prometheus
 * metric cswap_NAME (plus _total for a counter), so the two views can
 * never disagree on a name or a value.  Names follow the kernel's zram
 * (mm_stat, io_stat) and zswap counters where cswap has the same thing,
 * with the unit in the name.  The store's numbers are the rows of
 * store-stats.def, in its order: a new one is a row there, and appears
 * in both views (and in struct store_stats, and on the exit line if it
 * has a place there).  The control plane's own (the allocator's, the
 * process's, ratios, latency) are rows here, at the places that table
 * marks for them.  A front end's own numbers (control_extend) come last,
 * from its table, in both views alike.
 *
 * Locking: none here; store_stats() and zs_pool_stats() take their own
 * locks one at a time, so a snapshot is a near-instant one, not a
 * consistent cut across the store and the allocator.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "page.h"
#include "process-memory.h"

enum field_kind {
  GAUGE,                        /* a uint64_t that goes up and down */
  COUNTER,                      /* a uint64_t that only goes up */
  RATIO,                        /* a double */
};

struct field {
  const char *name;
  enum field_kind kind;
  size_t offset;                /* in struct control_snapshot */
  const char *help;
};

#define S(member) offsetof (struct control_snapshot, member)

/* The control plane's own numbers, at the places store-stats.def marks
 * for them (STORE_STAT_VIEW_ROWS): the allocator's, the process's, and
 * what is worked out from the store's.
 */
#define VIEW_ROWS_MEMORY_USED \
  { "memory_used_bytes", GAUGE, S (memory_used_bytes), \
    "Pool and metadata memory: what the device costs." },
#define VIEW_ROWS_POOL_OBJECTS \
  { "objects_used", GAUGE, S (pool.objects_used), \
    "Live allocator objects." }, \
  { "zspages", GAUGE, S (pool.zspages), "Allocator zspages." },
#define VIEW_ROWS_RESERVE_AND_PROCESS \
  { "reserve_bytes", GAUGE, S (reserve_bytes), \
    "Warm memory kept for new zspages, not in pool_bytes." }, \
  { "reserve_misses", COUNTER, S (pool.reserve_misses), \
    "New zspages the reserve did not hold: the write waited for the refill thread." }, \
  { "reserve_timeouts", COUNTER, S (pool.reserve_timeouts), \
    "Writes refused because the refill thread found no memory in time." }, \
  { "process_rss_bytes", GAUGE, S (process.rss_bytes), \
    "The daemon's resident memory (VmRSS)." }, \
  { "process_peak_bytes", GAUGE, S (process.peak_bytes), \
    "The most resident memory the daemon ever had (VmHWM): its cost at its worst." }, \
  { "process_locked_bytes", GAUGE, S (process.locked_bytes), \
    "The daemon's locked memory (VmLck): all of it once memory is locked." },
#define VIEW_ROWS_COMPACTED \
  { "pages_compacted", COUNTER, S (pool.pages_compacted), \
    "Pages freed by compaction (zram pages_compacted)." }, \
  { "objects_moved", COUNTER, S (pool.objects_moved), \
    "Objects moved by compaction." }, \
  { "pool_pages_faulted_in", COUNTER, S (pool.pages_faulted_in), \
    "Pages faulted in for new zspages: each a zeroed page from the kernel." }, \
  { "pool_pages_given_back", COUNTER, S (pool.pages_given_back), \
    "Pages of dead zspages given back to the kernel." },

static const struct field fields[] = {
#define STORE_STAT(name, kind, line, help) \
  { #name, kind, S (store.name), help },
#define STORE_STAT_VIEW_ROWS(tag) VIEW_ROWS_ ## tag
#include "store-stats.def"
  { "compression_ratio", RATIO, S (compression_ratio),
    "Original bytes over compressed bytes." },
  { "effective_ratio", RATIO, S (effective_ratio),
    "Original bytes over memory used: the memory the device saves." },
  { "read_requests", COUNTER, S (request[STORE_REQUEST_READ].count),
    "Requests served: reads, of any size." },
  { "read_mean_us", RATIO, S (request[STORE_REQUEST_READ].mean_us),
    "Mean time a request spent in the daemon (the transport's receive and reply aside): reads." },
  { "read_p50_us", RATIO, S (request[STORE_REQUEST_READ].p50_us),
    "Median of that time (the upper bound of its power-of-two bucket)." },
  { "read_p99_us", RATIO, S (request[STORE_REQUEST_READ].p99_us),
    "99th percentile of that time (the upper bound of its bucket)." },
  { "write_requests", COUNTER, S (request[STORE_REQUEST_WRITE].count),
    "Requests served: writes, of any size." },
  { "write_mean_us", RATIO, S (request[STORE_REQUEST_WRITE].mean_us),
    "Mean time a request spent in the daemon (the transport's receive and reply aside): writes." },
  { "write_p50_us", RATIO, S (request[STORE_REQUEST_WRITE].p50_us),
    "Median of that time (the upper bound of its power-of-two bucket)." },
  { "write_p99_us", RATIO, S (request[STORE_REQUEST_WRITE].p99_us),
    "99th percentile of that time (the upper bound of its bucket)." },
  { "trim_requests", COUNTER, S (request[STORE_REQUEST_TRIM].count),
    "Requests served: trims and write-zeroes, of any size." },
  { "trim_mean_us", RATIO, S (request[STORE_REQUEST_TRIM].mean_us),
    "Mean time a request spent in the daemon (the transport's receive and reply aside): trims and write-zeroes." },
  { "trim_p50_us", RATIO, S (request[STORE_REQUEST_TRIM].p50_us),
    "Median of that time (the upper bound of its power-of-two bucket)." },
  { "trim_p99_us", RATIO, S (request[STORE_REQUEST_TRIM].p99_us),
    "99th percentile of that time (the upper bound of its bucket)." },
  { "uptime_seconds", RATIO, S (uptime_seconds),
    "Seconds since the control plane started." },
};

#undef S
#undef VIEW_ROWS_MEMORY_USED
#undef VIEW_ROWS_POOL_OBJECTS
#undef VIEW_ROWS_RESERVE_AND_PROCESS
#undef VIEW_ROWS_COMPACTED

static uint64_t
field_uint (const struct control_snapshot *snapshot, const struct field *f)
{
  return *(const uint64_t *) ((const char *) snapshot + f->offset);
}

static double
field_double (const struct control_snapshot *snapshot, const struct field *f)
{
  return *(const double *) ((const char *) snapshot + f->offset);
}

static double
ratio (uint64_t numerator, uint64_t denominator)
{
  return denominator ? (double) numerator / denominator : 0;
}

void
control_snapshot (struct control *control, struct control_snapshot *s)
{
  struct timespec now;

  *s = (struct control_snapshot) { 0 };
  store_stats (control->store, &s->store);
  zs_pool_stats (store_pool (control->store), &s->pool);
  store_get_codec (control->store, &s->codec);
  clock_gettime (CLOCK_MONOTONIC, &now);
  s->uptime_seconds = (now.tv_sec - control->started.tv_sec)
    + (now.tv_nsec - control->started.tv_nsec) / 1e9;
  s->memory_used_bytes = s->store.pool_bytes + s->store.metadata_bytes;
  s->reserve_bytes = s->pool.reserve_pages * CSWAP_PAGE_SIZE;
  process_memory_usage (&s->process);
  s->compression_ratio = ratio (s->store.original_bytes,
                                s->store.compressed_bytes);
  s->effective_ratio = ratio (s->store.original_bytes, s->memory_used_bytes);
  for (int kind = 0; kind < STORE_REQUEST_KINDS; kind++)
    store_request_latency (control->store, kind, &s->request[kind]);
  s->extensions = control->extensions;
  s->extension_count = control->extension_count;
  for (unsigned i = 0; i < s->extension_count; i++)
    if (s->extensions[i]->number_count)
      s->extensions[i]->read_numbers (s->extensions[i]->arg,
                                      s->extension_numbers[i]);
}

void
control_stats_json (struct json *j, const struct control_snapshot *s)
{
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const struct field *f = &fields[i];

    if (f->kind == RATIO)
      json_double (j, f->name, field_double (s, f));
    else
      json_uint (j, f->name, field_uint (s, f));
  }
  for (unsigned e = 0; e < s->extension_count; e++)
    for (unsigned i = 0; i < s->extensions[e]->number_count; i++)
      json_uint (j, s->extensions[e]->numbers[i].name,
                 s->extension_numbers[e][i]);
}

/* One metric's HELP and TYPE lines, and its sample if it is a whole
 * number (a ratio's sample is the caller's).
 */
static void
print_metric (FILE *f, const char *name, enum field_kind kind,
              const char *help, uint64_t value)
{
  const char *suffix = kind == COUNTER ? "_total" : "";

  fprintf (f, "# HELP cswap_%s%s %s\n# TYPE cswap_%s%s %s\n",
           name, suffix, help, name, suffix,
           kind == COUNTER ? "counter" : "gauge");
  if (kind != RATIO)
    fprintf (f, "cswap_%s%s %llu\n", name, suffix,
             (unsigned long long) value);
}

char *
control_metrics_text (const struct control_snapshot *s)
{
  char *text = NULL;
  size_t len;
  FILE *f = open_memstream (&text, &len);

  if (f == NULL)
    return NULL;
  fprintf (f, "# HELP cswap_info The daemon's version and codec.\n"
           "# TYPE cswap_info gauge\n"
           "cswap_info{version=\"%s\",codec=\"%s\"} 1\n"
           "# HELP cswap_codec_level The codec level for new pages.\n"
           "# TYPE cswap_codec_level gauge\n"
           "cswap_codec_level %d\n",
           CSWAP_VERSION, codec_name (s->codec.id), s->codec.level);
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const struct field *field = &fields[i];

    print_metric (f, field->name, field->kind, field->help,
                  field->kind == RATIO ? 0 : field_uint (s, field));
    if (field->kind == RATIO)
      fprintf (f, "cswap_%s %.4f\n", field->name, field_double (s, field));
  }
  for (unsigned e = 0; e < s->extension_count; e++) {
    const struct control_extension *x = s->extensions[e];

    for (unsigned i = 0; i < x->number_count; i++) {
      const struct control_extension_number *n = &x->numbers[i];

      print_metric (f, n->name, n->counter ? COUNTER : GAUGE, n->help,
                    s->extension_numbers[e][i]);
    }
    if (x->write_metrics)
      x->write_metrics (x->arg, f);
  }
  if (ferror (f)) {
    fclose (f);
    free (text);
    return NULL;
  }
  if (fclose (f) != 0) {
    free (text);
    return NULL;
  }
  return text;
}
