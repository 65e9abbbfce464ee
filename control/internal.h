/* cswap: what the dispatcher's files share (internal to control/). */
#ifndef CSWAP_CONTROL_INTERNAL_H
#define CSWAP_CONTROL_INTERNAL_H

#include <pthread.h>
#include <time.h>

#include "compress.h"
#include "control.h"
#include "json.h"
#include "process-memory.h"
#include "store.h"
#include "zsmalloc.h"

/* The most a reply may take: the classes table is the largest, about
 * 250 bytes per class and at most a few hundred classes.
 */
#define CONTROL_REPLY_MAX (256 * 1024)

struct control {
  struct store *store;
  pthread_mutex_t lock;         /* serialises get and set */
  struct timespec started;      /* CLOCK_MONOTONIC, for uptime_seconds */
  /* The front end's commands and numbers (control_extend), in the order
   * added; set before any command runs and never changed after.
   */
  const struct control_extension *extensions[CONTROL_MAX_EXTENSIONS];
  unsigned extension_count;
};

/* {"ok":false,"error":ERROR} and a newline, as control_execute() returns
 * it; NULL when out of memory.
 */
extern char *control_error_reply (const char *error, size_t *reply_len);

/* Everything `stats` and `metrics` show, read at one moment. */
struct control_snapshot {
  struct store_stats store;
  struct zs_pool_stats pool;
  struct codec_config codec;
  double uptime_seconds;
  uint64_t memory_used_bytes;   /* pool and metadata: what the device costs */
  uint64_t reserve_bytes;       /* warm pages the allocator keeps for new zspages */
  struct process_memory process;  /* the whole daemon */
  double compression_ratio;     /* original / compressed bytes */
  double effective_ratio;       /* original bytes / memory_used_bytes */
  struct latency_summary request[STORE_REQUEST_KINDS];
  /* The extensions' numbers, each in its table's order. */
  const struct control_extension *const *extensions;
  unsigned extension_count;
  uint64_t extension_numbers[CONTROL_MAX_EXTENSIONS]
                            [CONTROL_EXTENSION_MAX_NUMBERS];
};

extern void control_snapshot (struct control *control,
                              struct control_snapshot *snapshot);
/* The counters as members of the JSON object being written. */
extern void control_stats_json (struct json *j,
                                const struct control_snapshot *snapshot);
/* The Prometheus text exposition, NUL-terminated, for the caller to free;
 * NULL when out of memory.
 */
extern char *control_metrics_text (const struct control_snapshot *snapshot);

#endif /* CSWAP_CONTROL_INTERNAL_H */
