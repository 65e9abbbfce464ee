/* cswap: the page store — setup, teardown, background threads and the
 * two commands (compact, writeback); see store.h.
 *
 * A store is made bottom up, each part handed what it works on and
 * nothing of the store above it: the slots (slot-state.h) and the
 * allocator, whose owner they are; the pool limit; the compactor, the
 * deferred queue and the recompressor; then, with a backing file, the
 * tier and the writer.
 * The data path (data-path.c), statistics (store-stats.c) and settings
 * (store-settings.c) are the store's other files; store-internal.h says
 * which is which.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "page.h"
#include "store-internal.h"

/* Compact once what compaction could free is this share of the pool.
 * A fragmented pool after a program's swap is discarded holds 4-5 times
 * its data; 10% is well clear of the churn of a busy one.
 */
#define DEFAULT_AUTO_COMPACT_PERCENT 10

static char create_error[256];

const char *
store_create_error (void)
{
  return create_error;
}

/* The recompression settings CONFIG gives, its default filled in. */
static struct store_recompress
recompress_settings (const struct store_config *config)
{
  struct store_recompress s = config->recompress;

  if (s.after_s == 0)
    s.after_s = STORE_DEFAULT_COLD_AFTER_S;
  return s;
}

static bool
config_is_valid (const struct store_config *config)
{
  struct store_recompress recompress = recompress_settings (config);
  uint64_t areas = config->areas ? config->areas : 1;

  return config->size_bytes != 0 && config->size_bytes % CSWAP_PAGE_SIZE == 0
    && areas <= STORE_MAX_AREAS
    && config->size_bytes / CSWAP_PAGE_SIZE % areas == 0
    && config->size_bytes / CSWAP_PAGE_SIZE <= ZS_MAX_OWNER_COOKIE
    && store_codec_valid (&config->codec)
    && recompress_settings_valid (&recompress)
    && config->huge_threshold_bytes <= CSWAP_PAGE_SIZE
    && pool_limit_valid (config->pool_limit_bytes)
    && (config->persistence == STORE_PRIVATE
        || (areas == 1 && config->persistence <= STORE_SEGMENT_ADOPT));
}

/* The backing file, before the segment that keeps its state is made or
 * adopted.  0, or -1 with errno and create_error set.
 */
static int
open_backing (struct store *store, const struct store_config *config)
{
  struct tier_config tier_config = {
    .path = config->backing_path,
    .size_bytes = config->backing_size_bytes,
    .thin = config->backing_thin,
    .encrypt = !config->backing_in_clear,
  };
  const char *why;

  store->slots.tier = tier_open (&tier_config, &why);
  if (store->slots.tier == NULL) {
    snprintf (create_error, sizeof create_error, "%s: %s",
              config->backing_path, why);
    return -1;
  }
  return 0;
}

/* The slots and the allocator they own.  0, or -1 with errno and
 * create_error set.
 */
static int
create_slots (struct store *store, const struct store_config *config)
{
  if (slot_state_init (&store->slots, config->size_bytes / CSWAP_PAGE_SIZE,
                       &store->count)) {
    snprintf (create_error, sizeof create_error, "out of memory");
    return -1;
  }
  struct zs_pool_config pool_config = {
    .max_pages_per_zspage = config->max_pages_per_zspage,
    .reserve_bytes = config->reserve_bytes,
    .refill_thread_init = config->refill_thread_init,
    .max_objects = store->slots.table.slots,
    .owner_ops = &slot_zs_owner_ops,
    .owner = &store->slots,
  };
  store->slots.limit = &store->limit;
  /* The backing file first: the segment keeps its state. */
  if ((config->backing_path && open_backing (store, config))
      || (config->persistence != STORE_PRIVATE
          && store_segment_open (store, config, &pool_config, create_error,
                                 sizeof create_error))) {
    int saved_errno = errno;
    tier_close (store->slots.tier);
    slot_state_destroy (&store->slots);
    errno = saved_errno;
    return -1;
  }
  store->slots.pool = zs_pool_create (&pool_config);
  if (store->slots.pool == NULL) {
    int saved_errno = errno;
    snprintf (create_error, sizeof create_error, "allocator: %m");
    store_segment_release (store);
    tier_close (store->slots.tier);
    slot_state_destroy (&store->slots);
    errno = saved_errno;
    return -1;
  }
  return 0;
}

/* Above the allocator's huge class size an object takes a page of its
 * own anyway: store the page itself and save the decompression.
 */
static uint32_t
huge_threshold (struct zs_pool *pool, uint32_t configured)
{
  uint32_t huge = zs_huge_class_size (pool);

  return configured && configured < huge ? configured : huge;
}

/* The compactor, the deferred queue and the recompressor.  0, or -1 with
 * create_error.
 */
static int
create_threads (struct store *store, const struct store_config *config)
{
  struct store_recompress recompress = recompress_settings (config);
  struct auto_compact_config compact_config = {
    .pool = store->slots.pool,
    .threshold_percent = config->manual_compaction ? 0
      : config->auto_compact_percent ? config->auto_compact_percent
      : DEFAULT_AUTO_COMPACT_PERCENT,
  };

  store->deferred = deferred_create (&store_deferred_ops, store);
  store->compactor = auto_compact_create (&compact_config);
  store->recompress = recompress_create (&store_recompress_ops, store,
                                         &store->slots, &recompress);
  if (store->deferred == NULL || store->compactor == NULL
      || store->recompress == NULL) {
    snprintf (create_error, sizeof create_error, "out of memory");
    return -1;
  }
  return 0;
}

/* The backing file's writer.  0, or -1 with errno and create_error set. */
static int
create_writeback (struct store *store, const struct store_config *config)
{
  struct writeback_context context = {
    .slots = &store->slots,
    .limit = &store->limit,
    .tier = store->slots.tier,
    .compactor = store->compactor,
    .count = &store->count,
  };
  store->writeback = writeback_create (&context, config);
  if (store->writeback == NULL
      || cold_read_ahead_init (&store->read_ahead) == -1) {
    snprintf (create_error, sizeof create_error, "writeback: %m");
    return -1;
  }
  return 0;
}

struct store *
store_create (const struct store_config *config)
{
  struct store *store;

  snprintf (create_error, sizeof create_error, "invalid configuration");
  if (!config_is_valid (config)) {
    errno = EINVAL;
    return NULL;
  }
  store = calloc (1, sizeof *store);
  if (store == NULL) {
    snprintf (create_error, sizeof create_error, "out of memory");
    return NULL;
  }
  store->size_bytes = config->size_bytes;
  if (create_slots (store, config)) {
    int saved_errno = errno;
    free (store);
    errno = saved_errno;
    return NULL;
  }
  if (store_areas_init (store, config->areas)) {
    snprintf (create_error, sizeof create_error, "out of memory");
    store_destroy (store);
    errno = ENOMEM;
    return NULL;
  }
  store_codec_set_now (store, &config->codec);
  pool_limit_init (&store->limit, store->slots.pool, config->pool_limit_bytes);
  atomic_init (&store->pool_limit_default, config->pool_limit_default);
  if (store_adopt_pages (store, create_error, sizeof create_error)) {
    int saved_errno = errno;
    store_destroy (store);
    errno = saved_errno;
    return NULL;
  }
  store->huge_threshold_bytes = huge_threshold (store->slots.pool,
                                                config->huge_threshold_bytes);
  if (create_threads (store, config)
      || (config->backing_path && create_writeback (store, config))) {
    int saved_errno = errno;
    store_destroy (store);
    errno = saved_errno;
    return NULL;
  }
  return store;
}

int
store_start_background (struct store *store)
{
  /* Before the writer can seal with it: the key was locked before the
   * front end forked.
   */
  int r = tier_lock_key (store->slots.tier);

  if (r)
    return r;
  store_segment_after_memory_lock (store);
  if (zs_pool_start_refill (store->slots.pool) == -1)
    return -errno;
  r = writeback_start (store->writeback);
  if (r == 0)
    r = deferred_start (store->deferred);
  if (r == 0)
    r = auto_compact_start (store->compactor);
  if (r == 0)
    r = recompress_start (store->recompress);
  if (r)
    store_stop_background (store);
  else
    store_requeue_deferred (store);
  return r;
}

void
store_stop_background (struct store *store)
{
  recompress_stop (store->recompress);
  auto_compact_stop (store->compactor);
  deferred_stop (store->deferred);
  writeback_stop (store->writeback);
  zs_pool_stop_refill (store->slots.pool);
}

void
store_destroy (struct store *store)
{
  if (store == NULL)
    return;
  /* Every thread ends before anything is freed: the writer asks the
   * compaction thread for a run (its eventfd) until it stops.
   */
  store_stop_background (store);
  auto_compact_destroy (store->compactor);
  recompress_destroy (store->recompress);
  deferred_destroy (store->deferred);
  writeback_destroy (store->writeback);
  cold_read_ahead_destroy (&store->read_ahead);
  tier_close (store->slots.tier);
  zs_pool_destroy (store->slots.pool);
  slot_state_destroy (&store->slots);
  store_segment_release (store);
  store_areas_destroy (store);
  free (store);
}

uint64_t
store_size (const struct store *store)
{
  return store->size_bytes;
}

struct zs_pool *
store_pool (struct store *store)
{
  return store->slots.pool;
}

int
store_compact (struct store *store, struct zs_compact_result *result)
{
  return auto_compact_run (store->compactor, result);
}

int
store_writeback (struct store *store, unsigned idle_seconds,
                 uint64_t max_pages, bool include_huge,
                 struct store_writeback_result *result)
{
  *result = (struct store_writeback_result) { 0 };
  if (idle_seconds > STORE_MAX_IDLE_WRITEBACK_S)
    return -EINVAL;
  if (store->writeback == NULL)
    return -ENODEV;
  return writeback_sweep (store->writeback, idle_seconds, max_pages,
                          include_huge, result);
}
