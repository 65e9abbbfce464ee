/* cswap: the exit stats line (see stats-line.h).
 *
 * The numbers on the line, and their order, are store-stats.def's (its
 * LINE column).
 *
 * Locking: none here; store_stats() reads the store's counters, each
 * atomically, so the line is a near-instant snapshot, not a consistent cut.
 */
#include <stddef.h>
#include <stdint.h>

#include "stats-line.h"

/* The line's numbers: the rows of store-stats.def with a place on it. */
struct line_stat {
  unsigned place;               /* 1 first; 0: not on the line */
  const char *name;
  size_t offset;                /* in struct store_stats */
};

static const struct line_stat line_stats[] = {
#define STORE_STAT(name, kind, line, help) \
  { line, #name, offsetof (struct store_stats, name) },
#include "store-stats.def"
};

/* The longest the line can be: every name, its " =" and 20 digits. */
enum {
  STATS_LINE_BYTES = sizeof "cswap: stats\n"
#define STORE_STAT(name, kind, line, help) + sizeof " " #name "=" + 20
#include "store-stats.def"
};

static const struct line_stat *
line_stat_at (unsigned place)
{
  for (size_t i = 0; i < sizeof line_stats / sizeof line_stats[0]; i++)
    if (line_stats[i].place == place)
      return &line_stats[i];
  return NULL;
}

void
stats_line_print (FILE *f, struct store *store)
{
  struct store_stats s;
  char line[STATS_LINE_BYTES];
  size_t used = 0;

  store_stats (store, &s);
  /* Built whole, then written at once: one write to stderr. */
  used += snprintf (line, sizeof line, "cswap: stats");
  const struct line_stat *stat;
  for (unsigned place = 1; (stat = line_stat_at (place)) != NULL; place++) {
    uint64_t value = *(const uint64_t *) ((const char *) &s + stat->offset);
    used += snprintf (line + used, sizeof line - used, " %s=%llu",
                      stat->name, (unsigned long long) value);
  }
  fprintf (f, "%s\n", line);

  /* Request latency in the daemon, one group per kind (store.h). */
  static const char *const kinds[STORE_REQUEST_KINDS] = { "read", "write", "trim" };
  fprintf (f, "cswap: latency");
  for (int kind = 0; kind < STORE_REQUEST_KINDS; kind++) {
    struct latency_summary l;
    store_request_latency (store, kind, &l);
    fprintf (f, " %s_requests=%llu %s_mean_us=%.1f %s_p50_us=%.0f "
             "%s_p99_us=%.0f", kinds[kind], (unsigned long long) l.count,
             kinds[kind], l.mean_us, kinds[kind], l.p50_us, kinds[kind],
             l.p99_us);
  }
  fprintf (f, "\n");
}
