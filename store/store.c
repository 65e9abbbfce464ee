/* cswap: the page store's data path (see store.h).
 *
 * A whole-page write is prepared (same-filled check, compression into a
 * stack buffer) with no lock held, then installed under the slot's lock:
 * allocate, copy, publish, free the old object.  A partial-page write or
 * zero holds the slot's lock across read-modify-write so that two partial
 * writes to one page cannot lose each other's bytes.  Reads decompress
 * under the slot's lock, which is also what keeps compaction from moving
 * the object meanwhile (zsmalloc.h: the owner lock).
 *
 * Lock order: slot stripe lock -> allocator class lock -> allocator pool
 * lock.  Only one slot lock is ever held at a time.  Counters are relaxed
 * atomics: each is exact, a snapshot of several is not simultaneous.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "page.h"
#include "slot-table.h"
#include "store.h"
#include "zsmalloc.h"

struct store_counters {
  atomic_uint_fast64_t same_filled_pages, huge_pages, compressed_pages;
  atomic_uint_fast64_t compressed_bytes;
  atomic_uint_fast64_t reads, writes, trims;
  atomic_uint_fast64_t failed_writes, read_errors, pool_limit_hits;
};

struct store {
  uint64_t size_bytes;
  uint32_t huge_threshold_bytes;
  _Atomic uint32_t codec_packed;        /* id << 16 | (uint16_t) level */
  atomic_uint_fast64_t pool_limit_bytes;
  struct slot_table table;
  struct zs_pool *pool;
  struct store_counters count;
};

/* A page ready to install: what prepare_page() decided for it. */
struct prepared_page {
  enum slot_type type;
  enum codec_id codec;
  uint64_t same_value;
  const void *bytes;            /* SLOT_STORED: LENGTH bytes to copy */
  uint32_t length;
  unsigned char compressed[CSWAP_PAGE_SIZE];
};

static void
counter_add (atomic_uint_fast64_t *counter, int64_t delta)
{
  atomic_fetch_add_explicit (counter, (uint64_t) delta, memory_order_relaxed);
}

static uint64_t
counter_get (atomic_uint_fast64_t *counter)
{
  return atomic_load_explicit (counter, memory_order_relaxed);
}

static struct codec_config
current_codec (struct store *store)
{
  uint32_t packed = atomic_load_explicit (&store->codec_packed,
                                          memory_order_relaxed);
  return (struct codec_config) { .id = packed >> 16,
                                 .level = (int16_t) (packed & 0xffff) };
}

/* Compaction's view of the owner: see zs_owner_ops in zsmalloc.h. */
static void
owner_lock (void *opaque, uint32_t slot)
{
  struct store *store = opaque;
  pthread_mutex_lock (slot_lock (&store->table, slot));
}

static void
owner_unlock (void *opaque, uint32_t slot)
{
  struct store *store = opaque;
  pthread_mutex_unlock (slot_lock (&store->table, slot));
}

static bool
owner_retarget (void *opaque, uint32_t slot, zs_handle from, zs_handle to)
{
  struct store *store = opaque;
  struct slot_chunk *chunk = slot_chunk (&store->table, slot);
  unsigned i = slot % SLOTS_PER_CHUNK;

  if (chunk == NULL || slot_flags_type (chunk->flags[i]) != SLOT_STORED
      || slot_word_handle (chunk->word[i]) != from)
    return false;
  chunk->word[i] = slot_word_make (to, slot_word_length (chunk->word[i]));
  return true;
}

static const struct zs_owner_ops store_owner_ops = {
  .lock = owner_lock,
  .unlock = owner_unlock,
  .retarget = owner_retarget,
};

struct store *
store_create (const struct store_config *config)
{
  struct store *store;
  int min, max;

  if (config->size_bytes == 0 || config->size_bytes % CSWAP_PAGE_SIZE
      || config->size_bytes / CSWAP_PAGE_SIZE > ZS_MAX_OWNER_COOKIE
      || config->codec.id >= CODEC_COUNT
      || codec_check_level (config->codec.id, config->codec.level, &min, &max)
      || config->huge_threshold_bytes > CSWAP_PAGE_SIZE) {
    errno = EINVAL;
    return NULL;
  }
  store = calloc (1, sizeof *store);
  if (store == NULL)
    return NULL;
  store->size_bytes = config->size_bytes;
  atomic_init (&store->pool_limit_bytes, config->pool_limit_bytes);
  if (slot_table_init (&store->table, config->size_bytes / CSWAP_PAGE_SIZE)) {
    free (store);
    return NULL;
  }
  store_set_codec (store, &config->codec);

  struct zs_pool_config pool_config = {
    .max_pages_per_zspage = config->max_pages_per_zspage,
    .max_objects = store->table.slots,
    .owner_ops = &store_owner_ops,
    .owner = store,
  };
  store->pool = zs_pool_create (&pool_config);
  if (store->pool == NULL) {
    int saved_errno = errno;
    slot_table_destroy (&store->table);
    free (store);
    errno = saved_errno;
    return NULL;
  }
  /* Above the allocator's huge class size an object takes a page of its
   * own anyway: store the page itself and save the decompression.
   */
  store->huge_threshold_bytes = zs_huge_class_size (store->pool);
  if (config->huge_threshold_bytes
      && config->huge_threshold_bytes < store->huge_threshold_bytes)
    store->huge_threshold_bytes = config->huge_threshold_bytes;
  return store;
}

void
store_destroy (struct store *store)
{
  if (store == NULL)
    return;
  zs_pool_destroy (store->pool);
  slot_table_destroy (&store->table);
  free (store);
}

uint64_t
store_size (const struct store *store)
{
  return store->size_bytes;
}

int
store_set_codec (struct store *store, const struct codec_config *codec)
{
  int min, max;

  if (codec->id >= CODEC_COUNT
      || codec_check_level (codec->id, codec->level, &min, &max))
    return -EINVAL;
  atomic_store_explicit (&store->codec_packed,
                         (uint32_t) codec->id << 16 | (uint16_t) codec->level,
                         memory_order_relaxed);
  return 0;
}

void
store_get_codec (struct store *store, struct codec_config *codec)
{
  *codec = current_codec (store);
}

void
store_set_pool_limit (struct store *store, uint64_t bytes)
{
  atomic_store_explicit (&store->pool_limit_bytes, bytes, memory_order_relaxed);
}

/* Decides how PAGE is kept: same-filled, compressed, or raw.  No lock. */
static void
prepare_page (struct store *store, const void *page, struct prepared_page *p)
{
  struct codec_config codec = current_codec (store);

  p->codec = codec.id;
  if (page_is_same_filled (page, &p->same_value)) {
    p->type = SLOT_SAME_FILLED;
    return;
  }
  p->type = SLOT_STORED;
  p->length = codec_compress_page (&codec, page, p->compressed,
                                   store->huge_threshold_bytes);
  p->bytes = p->compressed;
  if (p->length == 0) {
    p->length = CSWAP_PAGE_SIZE;
    p->bytes = page;
  }
}

static void
count_slot (struct store *store, uint8_t flags, uint64_t word, int sign)
{
  switch (slot_flags_type (flags)) {
  case SLOT_ABSENT:
    break;
  case SLOT_SAME_FILLED:
    counter_add (&store->count.same_filled_pages, sign);
    break;
  case SLOT_STORED:
    counter_add (slot_word_length (word) == CSWAP_PAGE_SIZE
                 ? &store->count.huge_pages : &store->count.compressed_pages,
                 sign);
    counter_add (&store->count.compressed_bytes,
                 sign * (int64_t) slot_word_length (word));
    break;
  }
}

/* Empties slot I of CHUNK.  Called with the slot's lock held. */
static void
release_slot (struct store *store, struct slot_chunk *chunk, unsigned i)
{
  count_slot (store, chunk->flags[i], chunk->word[i], -1);
  if (slot_flags_type (chunk->flags[i]) == SLOT_STORED)
    zs_free (store->pool, slot_word_handle (chunk->word[i]));
  chunk->flags[i] = SLOT_ABSENT;
  chunk->word[i] = 0;
}

static bool
pool_limit_reached (struct store *store, uint32_t length)
{
  uint64_t limit = atomic_load_explicit (&store->pool_limit_bytes,
                                         memory_order_relaxed);

  if (limit == 0)
    return false;
  if (zs_pool_pages_used (store->pool) * CSWAP_PAGE_SIZE + length <= limit)
    return false;
  counter_add (&store->count.pool_limit_hits, 1);
  return true;
}

/* Replaces what SLOT holds with P.  Called with the slot's lock held.  On
 * failure the slot keeps what it had.
 */
static int
install_page (struct store *store, uint64_t slot, const struct prepared_page *p)
{
  struct slot_chunk *chunk = slot_chunk_make (&store->table, slot);
  unsigned i = slot % SLOTS_PER_CHUNK;
  uint64_t word;

  if (chunk == NULL)
    goto refused;
  if (p->type == SLOT_SAME_FILLED)
    word = p->same_value;
  else {
    if (pool_limit_reached (store, p->length))
      goto refused;
    zs_handle handle = zs_malloc (store->pool, p->length, slot);
    if (handle == ZS_HANDLE_NONE)
      goto refused;
    memcpy (zs_object (store->pool, handle), p->bytes, p->length);
    word = slot_word_make (handle, p->length);
  }
  release_slot (store, chunk, i);
  chunk->word[i] = word;
  chunk->flags[i] = slot_flags_make (p->type, p->codec);
  count_slot (store, chunk->flags[i], word, +1);
  return 0;

 refused:
  counter_add (&store->count.failed_writes, 1);
  return -ENOSPC;
}

/* Reads SLOT into PAGE.  Called with the slot's lock held. */
static int
load_page (struct store *store, uint64_t slot, void *page)
{
  struct slot_chunk *chunk = slot_chunk (&store->table, slot);
  unsigned i = slot % SLOTS_PER_CHUNK;

  if (chunk == NULL) {
    memset (page, 0, CSWAP_PAGE_SIZE);
    return 0;
  }
  uint64_t word = chunk->word[i];
  switch (slot_flags_type (chunk->flags[i])) {
  case SLOT_ABSENT:
    memset (page, 0, CSWAP_PAGE_SIZE);
    return 0;
  case SLOT_SAME_FILLED:
    page_fill (page, word);
    return 0;
  case SLOT_STORED: {
    const void *object = zs_object (store->pool, slot_word_handle (word));
    uint32_t length = slot_word_length (word);
    if (length == CSWAP_PAGE_SIZE) {
      memcpy (page, object, CSWAP_PAGE_SIZE);
      return 0;
    }
    if (codec_decompress_page (slot_flags_codec (chunk->flags[i]), object,
                               length, page) == 0)
      return 0;
    counter_add (&store->count.read_errors, 1);
    return -EIO;
  }
  }
  abort ();                     /* a slot type the store never writes */
}

static int
read_page (struct store *store, uint64_t slot, void *page)
{
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (slot_lock (&store->table, slot));
  return load_page (store, slot, page);
}

static int
write_page (struct store *store, uint64_t slot, const void *page)
{
  struct prepared_page p;

  prepare_page (store, page, &p);
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (slot_lock (&store->table, slot));
  return install_page (store, slot, &p);
}

static int
zero_page (struct store *store, uint64_t slot)
{
  struct slot_chunk *chunk = slot_chunk (&store->table, slot);

  if (chunk == NULL)
    return 0;                   /* never written: already zero */
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (slot_lock (&store->table, slot));
  release_slot (store, chunk, slot % SLOTS_PER_CHUNK);
  return 0;
}

/* Part of one page: read-modify-write under the slot's lock.  SRC NULL
 * means zeroes.
 */
static int
modify_page (struct store *store, uint64_t slot, const void *src,
             uint32_t count, uint32_t offset)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  struct prepared_page p;
  int r;

  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (slot_lock (&store->table, slot));
  r = load_page (store, slot, page);
  if (r)
    return r;
  if (src)
    memcpy (page + offset, src, count);
  else
    memset (page + offset, 0, count);
  prepare_page (store, page, &p);
  return install_page (store, slot, &p);
}

static bool
range_is_valid (struct store *store, uint64_t count, uint64_t offset)
{
  return offset <= store->size_bytes && count <= store->size_bytes - offset;
}

enum store_op { OP_READ, OP_WRITE, OP_ZERO };

/* Walks the pages of [OFFSET, OFFSET+COUNT) and applies OP to each: whole
 * pages directly, partial ones through a bounce page or modify_page.
 */
static int
for_each_page (struct store *store, enum store_op op, unsigned char *buf,
               uint64_t count, uint64_t offset)
{
  atomic_uint_fast64_t *counter = op == OP_READ ? &store->count.reads
    : op == OP_WRITE ? &store->count.writes : &store->count.trims;

  if (!range_is_valid (store, count, offset))
    return -EINVAL;
  while (count > 0) {
    uint64_t slot = offset / CSWAP_PAGE_SIZE;
    uint32_t in_page = offset % CSWAP_PAGE_SIZE;
    uint32_t n = CSWAP_PAGE_SIZE - in_page;
    int r;

    if (n > count)
      n = count;
    if (n == CSWAP_PAGE_SIZE) {
      r = op == OP_READ ? read_page (store, slot, buf)
        : op == OP_WRITE ? write_page (store, slot, buf)
        : zero_page (store, slot);
    }
    else if (op == OP_READ) {
      unsigned char page[CSWAP_PAGE_SIZE];
      r = read_page (store, slot, page);
      if (r == 0)
        memcpy (buf, page + in_page, n);
    }
    else
      r = modify_page (store, slot, op == OP_WRITE ? buf : NULL, n, in_page);
    if (r)
      return r;
    counter_add (counter, 1);
    if (buf)
      buf += n;
    offset += n;
    count -= n;
  }
  return 0;
}

int
store_read (struct store *store, void *buf, uint64_t count, uint64_t offset)
{
  return for_each_page (store, OP_READ, buf, count, offset);
}

int
store_write (struct store *store, const void *buf, uint64_t count,
             uint64_t offset)
{
  /* The cast is safe: OP_WRITE only reads from BUF. */
  return for_each_page (store, OP_WRITE, (unsigned char *) buf, count, offset);
}

int
store_zero (struct store *store, uint64_t count, uint64_t offset)
{
  return for_each_page (store, OP_ZERO, NULL, count, offset);
}

uint64_t
store_pages_stored (struct store *store)
{
  return counter_get (&store->count.same_filled_pages)
    + counter_get (&store->count.huge_pages)
    + counter_get (&store->count.compressed_pages);
}

void
store_stats (struct store *store, struct store_stats *s)
{
  struct zs_pool_stats pool;

  zs_pool_stats (store->pool, &pool);
  *s = (struct store_stats) {
    .size_bytes = store->size_bytes,
    .same_filled_pages = counter_get (&store->count.same_filled_pages),
    .huge_pages = counter_get (&store->count.huge_pages),
    .compressed_pages = counter_get (&store->count.compressed_pages),
    .compressed_bytes = counter_get (&store->count.compressed_bytes),
    .pool_bytes = pool.pages_used * CSWAP_PAGE_SIZE,
    .metadata_bytes = slot_table_bytes (&store->table) + pool.metadata_bytes
                      + sizeof *store,
    .pool_limit_bytes = atomic_load_explicit (&store->pool_limit_bytes,
                                              memory_order_relaxed),
    .reads = counter_get (&store->count.reads),
    .writes = counter_get (&store->count.writes),
    .trims = counter_get (&store->count.trims),
    .failed_writes = counter_get (&store->count.failed_writes),
    .read_errors = counter_get (&store->count.read_errors),
    .pool_limit_hits = counter_get (&store->count.pool_limit_hits),
  };
  s->pages_stored = store_pages_stored (store);
  s->original_bytes = s->pages_stored * CSWAP_PAGE_SIZE;
}

int
store_compact (struct store *store, struct zs_compact_result *result)
{
  return zs_compact (store->pool, result) == 0 ? 0 : -errno;
}

struct zs_pool *
store_pool (struct store *store)
{
  return store->pool;
}
