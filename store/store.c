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
 * A page written back to the backing file (SLOT_TIERED) is read without
 * its slot lock held across the disk read: note the slot word and the
 * generation of its place on disk (tier_generation), unlock, read,
 * relock, and use what was read only if both are unchanged (else retry),
 * so reads of cold pages do not stall their stripe.  The word alone is
 * not enough: a trim, the segment freed and taken again, and the page's
 * next copy written back to the same offset with the same length give
 * the same word, and the read may have fetched the old copy's bytes
 * (issue #27).  A place is written once a generation, so the pair is
 * exact, at no cost to the slot.  Partial-page
 * writes, rare on a swap device, keep the lock across the read.
 *
 * When the pool is at its limit and there is a backing file, a write does
 * not go to disk ahead of colder pages: it drops its slot lock, waits for
 * a batch of cold pages to go to disk (writeback.c), and retries.
 *
 * Lock order: writeback mutex -> slot stripe lock -> allocator class lock
 * -> allocator pool lock; the tier's lock is a leaf under the slot lock
 * (store-internal.h).  Only one slot lock is ever held at a time.
 * Counters are relaxed atomics: each is exact, a snapshot of several is
 * not simultaneous.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "page.h"
#include "store-internal.h"

/* Compact once what compaction could free is this share of the pool.
 * A fragmented pool after a program's swap is discarded holds 4-5 times
 * its data; 10% is well clear of the churn of a busy one.
 */
#define DEFAULT_AUTO_COMPACT_PERCENT 10

/* A page ready to install: what prepare_page() decided for it. */
struct prepared_page {
  enum slot_type type;
  enum codec_id codec;
  uint64_t same_value;
  const void *bytes;            /* SLOT_STORED: LENGTH bytes to copy */
  uint32_t length;
  bool deferred;                /* raw now, compressed later (deferred.c) */
  unsigned char compressed[CSWAP_PAGE_SIZE];
};

static struct codec_config
current_codec (struct store *store)
{
  uint32_t packed = atomic_load_explicit (&store->codec_packed,
                                          memory_order_relaxed);
  return (struct codec_config) { .id = packed >> 16,
                                 .level = (int16_t) (packed & 0xffff) };
}

/* The owner's lock for compaction (zs_owner_ops in zsmalloc.h) and for
 * the tier's cleaner (tier_owner_ops in tier.h): the slot's.
 */
void
store_owner_lock (void *opaque, uint32_t slot)
{
  struct store *store = opaque;
  pthread_mutex_lock (slot_lock (&store->table, slot));
}

void
store_owner_unlock (void *opaque, uint32_t slot)
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
  .lock = store_owner_lock,
  .unlock = store_owner_unlock,
  .retarget = owner_retarget,
};

static char create_error[256];

const char *
store_create_error (void)
{
  return create_error;
}

struct store *
store_create (const struct store_config *config)
{
  struct store *store;
  int min, max;

  snprintf (create_error, sizeof create_error, "invalid configuration");
  if (config->size_bytes == 0 || config->size_bytes % CSWAP_PAGE_SIZE
      || config->size_bytes / CSWAP_PAGE_SIZE > ZS_MAX_OWNER_COOKIE
      || config->codec.id >= CODEC_COUNT
      || codec_check_level (config->codec.id, config->codec.level, &min, &max)
      || config->huge_threshold_bytes > CSWAP_PAGE_SIZE
      || !pool_limit_valid (config->pool_limit_bytes)) {
    errno = EINVAL;
    return NULL;
  }
  store = calloc (1, sizeof *store);
  if (store == NULL) {
    snprintf (create_error, sizeof create_error, "out of memory");
    return NULL;
  }
  store->size_bytes = config->size_bytes;
  if (slot_table_init (&store->table, config->size_bytes / CSWAP_PAGE_SIZE)) {
    snprintf (create_error, sizeof create_error, "out of memory");
    free (store);
    return NULL;
  }
  store_set_codec (store, &config->codec);

  struct zs_pool_config pool_config = {
    .max_pages_per_zspage = config->max_pages_per_zspage,
    .reserve_bytes = config->reserve_bytes,
    .max_objects = store->table.slots,
    .owner_ops = &store_owner_ops,
    .owner = store,
  };
  store->pool = zs_pool_create (&pool_config);
  if (store->pool == NULL) {
    int saved_errno = errno;
    snprintf (create_error, sizeof create_error, "allocator: %m");
    slot_table_destroy (&store->table);
    free (store);
    errno = saved_errno;
    return NULL;
  }
  store_set_pool_limit (store, config->pool_limit_bytes);
  store->deferred = deferred_create (store);
  store->auto_compact = auto_compact_create (
    store, config->manual_compaction ? 0
    : config->auto_compact_percent ? config->auto_compact_percent
    : DEFAULT_AUTO_COMPACT_PERCENT);
  if (store->deferred == NULL || store->auto_compact == NULL) {
    snprintf (create_error, sizeof create_error, "out of memory");
    goto fail;
  }
  /* Above the allocator's huge class size an object takes a page of its
   * own anyway: store the page itself and save the decompression.
   */
  store->huge_threshold_bytes = zs_huge_class_size (store->pool);
  if (config->huge_threshold_bytes
      && config->huge_threshold_bytes < store->huge_threshold_bytes)
    store->huge_threshold_bytes = config->huge_threshold_bytes;
  if (config->backing_path) {
    struct tier_config tier_config = {
      .path = config->backing_path,
      .size_bytes = config->backing_size_bytes,
      .thin = config->backing_thin,
      .encrypt = !config->backing_in_clear,
    };
    const char *why;
    store->tier = tier_open (&tier_config, &why);
    if (store->tier == NULL) {
      snprintf (create_error, sizeof create_error, "%s: %s",
                config->backing_path, why);
      goto fail;
    }
    store->writeback = writeback_create (store, config);
    if (store->writeback == NULL) {
      snprintf (create_error, sizeof create_error, "writeback: %m");
      goto fail;
    }
  }
  return store;

 fail:;
  int saved_errno = errno;
  store_destroy (store);
  errno = saved_errno;
  return NULL;
}

int
store_start_background (struct store *store)
{
  /* Before the writer can seal with it: the key was locked before the
   * front end forked.
   */
  int r = tier_lock_key (store->tier);

  if (r)
    return r;
  if (zs_pool_start_refill (store->pool) == -1)
    return -errno;
  r = writeback_start (store->writeback);
  if (r == 0)
    r = deferred_start (store->deferred);
  if (r == 0)
    r = auto_compact_start (store->auto_compact);
  if (r)
    store_stop_background (store);
  return r;
}

void
store_stop_background (struct store *store)
{
  auto_compact_stop (store->auto_compact);
  deferred_stop (store->deferred);
  writeback_stop (store->writeback);
  zs_pool_stop_refill (store->pool);
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
  auto_compact_destroy (store->auto_compact);
  deferred_destroy (store->deferred);
  writeback_destroy (store->writeback);
  tier_close (store->tier);
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

/* Decides how PAGE is kept: same-filled, compressed, or raw.  No lock. */
static void
prepare_page (struct store *store, const void *page, struct prepared_page *p)
{
  struct codec_config codec = current_codec (store);

  p->codec = codec.id;
  p->deferred = false;
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

/* As prepare_page, but a page that is not same-filled is kept raw for the
 * compressor thread, if the deferred queue has a place for it (taken
 * here: the caller gives it back or fills it with deferred_push).  False,
 * with nothing taken, when the page should be compressed now.
 */
static bool
prepare_deferred (struct store *store, const void *page, struct prepared_page *p)
{
  /* Near a pool limit, pages go in compressed: raw ones would take the
   * room the limit leaves and could not be written back meanwhile.
   */
  if (!pool_has_room (store, 2 * DEFERRED_QUEUE_PAGES))
    return false;
  if (page_is_same_filled (page, &p->same_value)
      || !deferred_reserve (store->deferred))
    return false;
  *p = (struct prepared_page) {
    .type = SLOT_STORED, .codec = current_codec (store).id,
    .bytes = page, .length = CSWAP_PAGE_SIZE, .deferred = true,
  };
  return true;
}

void
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
  case SLOT_TIERED:
    counter_add (&store->count.tiered_pages, sign);
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
  else if (slot_flags_type (chunk->flags[i]) == SLOT_TIERED)
    tier_free (store->tier, slot_word_tier_offset (chunk->word[i]),
               slot_word_length (chunk->word[i]));
  chunk->flags[i] = SLOT_ABSENT;
  chunk->word[i] = 0;
}

/* Keeps pool_peak_bytes: a max kept by the writers, so the limit can be
 * checked after the fact (tests, the exit stats line).
 */
static void
note_pool_peak (struct store *store)
{
  uint64_t used = zs_pool_pages_used (store->pool) * CSWAP_PAGE_SIZE;
  uint64_t peak = counter_get (&store->count.pool_peak_bytes);

  while (used > peak
         && !atomic_compare_exchange_weak_explicit (&store->count.pool_peak_bytes,
                                                    &peak, used,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed))
    ;
}

/* The slot word for P, allocating and filling its object when it needs
 * one.  -EAGAIN: the pool is at its limit but a backing file can make
 * room; -ENOSPC: no room.  Called with the slot's lock held.
 */
static int
store_object (struct store *store, uint64_t slot, const struct prepared_page *p,
              uint64_t *word)
{
  if (p->type == SLOT_SAME_FILLED) {
    *word = p->same_value;
    return 0;
  }
  zs_handle handle = zs_malloc (store->pool, p->length, slot);
  if (handle == ZS_HANDLE_NONE) {
    if (errno != ENOSPC)
      return -ENOSPC;
    counter_add (&store->count.pool_limit_hits, 1);
    return store->writeback ? -EAGAIN : -ENOSPC;
  }
  memcpy (zs_object (store->pool, handle), p->bytes, p->length);
  *word = slot_word_make (handle, p->length);
  note_pool_peak (store);
  return 0;
}

/* Slot I of CHUNK now holds WORD with FLAGS; what it held is freed.
 * Called with the slot's lock held.
 */
static void
publish_slot (struct store *store, struct slot_chunk *chunk, unsigned i,
              uint64_t word, uint8_t flags)
{
  release_slot (store, chunk, i);
  chunk->word[i] = word;
  chunk->flags[i] = flags;
  count_slot (store, flags, word, +1);
}

/* Replaces what SLOT holds with P.  Called with the slot's lock held.  On
 * failure the slot keeps what it had.  -EAGAIN: the pool is full but a
 * backing file can make room; the caller drops the lock, calls
 * make_room() and tries again.
 */
static int
install_page (struct store *store, uint64_t slot, const struct prepared_page *p)
{
  struct slot_chunk *chunk = slot_chunk_make (&store->table, slot);
  uint64_t word;

  if (chunk == NULL)
    return -ENOSPC;
  int r = store_object (store, slot, p, &word);
  if (r)
    return r;
  publish_slot (store, chunk, slot % SLOTS_PER_CHUNK, word,
                slot_flags_touch (slot_flags_make (p->type, p->codec))
                | (p->deferred ? SLOT_DEFERRED : 0));
  return 0;
}

void
store_compress_deferred (struct store *store, struct slot_chunk *chunk,
                         unsigned i, uint64_t slot)
{
  uint8_t flags = chunk->flags[i] & ~SLOT_DEFERRED;
  const void *raw = zs_object (store->pool, slot_word_handle (chunk->word[i]));
  struct prepared_page p;
  uint64_t word;

  chunk->flags[i] = flags;
  prepare_page (store, raw, &p);
  /* Incompressible, or no room for the smaller copy: it stays raw. */
  if ((p.type == SLOT_STORED && p.length == CSWAP_PAGE_SIZE)
      || store_object (store, slot, &p, &word))
    return;
  /* Not an access: the page keeps its referenced bit and idle age. */
  flags &= ~(SLOT_TYPE_MASK | SLOT_CODEC_MASK);
  publish_slot (store, chunk, i, word, flags | slot_flags_make (p.type, p.codec));
}

/* After install_page's -EAGAIN for an object of LENGTH bytes: 0 to try
 * again, or -ENOSPC.
 */
static int
make_room (struct store *store, uint32_t length)
{
  return writeback_make_room (store, zs_new_zspage_pages (store->pool, length))
    ? -ENOSPC : 0;
}

/* A write's result, with a refused page counted. */
static int
count_refusal (struct store *store, int r)
{
  if (r == -ENOSPC)
    counter_add (&store->count.failed_writes, 1);
  return r;
}

static int
decode_page (struct store *store, enum codec_id codec, const void *object,
             uint32_t length, void *page)
{
  if (length == CSWAP_PAGE_SIZE) {
    memcpy (page, object, CSWAP_PAGE_SIZE);
    return 0;
  }
  if (codec_decompress_page (codec, object, length, page) == 0)
    return 0;
  counter_add (&store->count.read_errors, 1);
  return -EIO;
}

/* Slot I of CHUNK is tiered and OBJECT holds its bytes, just read from
 * disk: decodes them into PAGE and, when the pool has room below its
 * accept threshold and read writeback is off, brings the page back into
 * memory and frees its disk copy.  Called with the slot's lock held.
 */
static int
finish_tiered_read (struct store *store, struct slot_chunk *chunk, unsigned i,
                    uint64_t slot, const void *object, void *page)
{
  uint64_t word = chunk->word[i];
  uint32_t length = slot_word_length (word);
  uint8_t flags = slot_flags_touch (chunk->flags[i]);

  counter_add (&store->count.written_back_reads, 1);
  chunk->flags[i] = flags;
  if (!pool_may_promote (store, length)
      || writeback_keeps_reads (store->writeback))
    return decode_page (store, slot_flags_codec (flags), object, length, page);
  zs_handle handle = zs_malloc (store->pool, length, slot);
  if (handle != ZS_HANDLE_NONE) {
    memcpy (zs_object (store->pool, handle), object, length);
    release_slot (store, chunk, i);
    chunk->word[i] = slot_word_make (handle, length);
    chunk->flags[i] = (flags & ~SLOT_TYPE_MASK) | SLOT_STORED;
    count_slot (store, chunk->flags[i], chunk->word[i], +1);
  }
  return decode_page (store, slot_flags_codec (flags), object, length, page);
}

static int
read_tiered (struct store *store, uint64_t slot, uint64_t word, void *object)
{
  int r = tier_read (store->tier, slot_word_tier_offset (word),
                     slot_word_length (word), slot, object);
  if (r)
    counter_add (&store->count.read_errors, 1);
  return r;
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
  case SLOT_STORED:
    chunk->flags[i] = slot_flags_touch (chunk->flags[i]);
    return decode_page (store, slot_flags_codec (chunk->flags[i]),
                        zs_object (store->pool, slot_word_handle (word)),
                        slot_word_length (word), page);
  case SLOT_TIERED: {
    unsigned char object[CSWAP_PAGE_SIZE];
    int r = read_tiered (store, slot, word, object);
    return r ? r : finish_tiered_read (store, chunk, i, slot, object, page);
  }
  }
  abort ();                     /* a slot type the store never writes */
}

/* As load_page, but a tiered page is read from disk with the slot lock
 * dropped, and used only if the slot still points where it was read, in
 * the same generation of that place.
 */
static int
read_page (struct store *store, uint64_t slot, void *page)
{
  struct slot_chunk *chunk = slot_chunk (&store->table, slot);
  unsigned i = slot % SLOTS_PER_CHUNK;
  pthread_mutex_t *lock = slot_lock (&store->table, slot);
  unsigned char object[CSWAP_PAGE_SIZE];
  int r;

  for (;;) {
    pthread_mutex_lock (lock);
    if (chunk == NULL || slot_flags_type (chunk->flags[i]) != SLOT_TIERED) {
      uint8_t before = chunk ? chunk->flags[i] : 0;
      r = load_page (store, slot, page);
      if (r == 0 && chunk && writeback_keeps_reads (store->writeback))
        writeback_note_read (store->writeback, chunk, i, slot, before);
      break;
    }
    uint64_t word = chunk->word[i];
    uint64_t offset = slot_word_tier_offset (word);
    uint32_t generation = tier_generation (store->tier, offset);
    pthread_mutex_unlock (lock);
    r = tier_read (store->tier, offset, slot_word_length (word), slot, object);
    pthread_mutex_lock (lock);
    if (slot_flags_type (chunk->flags[i]) == SLOT_TIERED
        && chunk->word[i] == word
        && tier_generation (store->tier, offset) == generation) {
      if (r)
        counter_add (&store->count.read_errors, 1);
      else
        r = finish_tiered_read (store, chunk, i, slot, object, page);
      break;
    }
    /* Rewritten, trimmed, promoted or moved meanwhile (maybe back to the
     * same place, in a new generation): what was read may be stale, so
     * look again.
     */
    pthread_mutex_unlock (lock);
  }
  pthread_mutex_unlock (lock);
  return r;
}

static int
write_page (struct store *store, uint64_t slot, const void *page)
{
  pthread_mutex_t *lock = slot_lock (&store->table, slot);
  struct prepared_page p;
  int r;

  if (prepare_deferred (store, page, &p)) {
    pthread_mutex_lock (lock);
    r = install_page (store, slot, &p);
    pthread_mutex_unlock (lock);
    deferred_push (store->deferred, r == 0 ? slot : DEFERRED_SLOT_NONE);
    if (r == 0)
      return 0;
    /* No room for a raw page: a compressed one may still fit. */
  }
  prepare_page (store, page, &p);
  do {
    pthread_mutex_lock (lock);
    r = install_page (store, slot, &p);
    pthread_mutex_unlock (lock);
  } while (r == -EAGAIN && (r = make_room (store, p.length)) == 0);
  return count_refusal (store, r);
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
  pthread_mutex_t *lock = slot_lock (&store->table, slot);
  unsigned char page[CSWAP_PAGE_SIZE];
  struct prepared_page p;
  int r;

  do {
    pthread_mutex_lock (lock);
    r = load_page (store, slot, page);
    if (r == 0) {
      if (src)
        memcpy (page + offset, src, count);
      else
        memset (page + offset, 0, count);
      prepare_page (store, page, &p);
      r = install_page (store, slot, &p);
    }
    pthread_mutex_unlock (lock);
  } while (r == -EAGAIN && (r = make_room (store, p.length)) == 0);
  return count_refusal (store, r);
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

/* Whether SLOT reads as zeros without holding memory. */
static bool
page_is_hole (struct store *store, uint64_t slot)
{
  struct slot_chunk *chunk = slot_chunk (&store->table, slot);
  unsigned i = slot % SLOTS_PER_CHUNK;
  pthread_mutex_t *lock = slot_lock (&store->table, slot);

  if (chunk == NULL)
    return true;
  pthread_mutex_lock (lock);
  enum slot_type type = slot_flags_type (chunk->flags[i]);
  bool hole = type == SLOT_ABSENT
    || (type == SLOT_SAME_FILLED && chunk->word[i] == 0);
  pthread_mutex_unlock (lock);
  return hole;
}

int
store_extent (struct store *store, uint64_t offset, uint64_t count,
              bool *zero, uint64_t *length)
{
  if (count == 0 || !range_is_valid (store, count, offset))
    return -EINVAL;
  uint64_t end = offset + count;
  uint64_t at = offset / CSWAP_PAGE_SIZE * CSWAP_PAGE_SIZE;

  *zero = page_is_hole (store, at / CSWAP_PAGE_SIZE);
  for (at += CSWAP_PAGE_SIZE; at < end; ) {
    uint64_t slot = at / CSWAP_PAGE_SIZE;
    if (*zero && slot_chunk (&store->table, slot) == NULL) {
      /* A chunk never made: all of it is a hole. */
      at = (slot / SLOTS_PER_CHUNK + 1) * SLOTS_PER_CHUNK * CSWAP_PAGE_SIZE;
      continue;
    }
    if (page_is_hole (store, slot) != *zero)
      break;
    at += CSWAP_PAGE_SIZE;
  }
  *length = (at < end ? at : end) - offset;
  return 0;
}

uint64_t
store_pages_stored (struct store *store)
{
  return counter_get (&store->count.same_filled_pages)
    + counter_get (&store->count.huge_pages)
    + counter_get (&store->count.compressed_pages)
    + counter_get (&store->count.tiered_pages);
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
    .pool_limit_bytes = pool_limit_bytes (store),
    .reads = counter_get (&store->count.reads),
    .writes = counter_get (&store->count.writes),
    .trims = counter_get (&store->count.trims),
    .failed_writes = counter_get (&store->count.failed_writes),
    .read_errors = counter_get (&store->count.read_errors),
    .pool_limit_hits = counter_get (&store->count.pool_limit_hits),
    .pool_peak_bytes = counter_get (&store->count.pool_peak_bytes),
    .tiered_pages = counter_get (&store->count.tiered_pages),
    .written_back_pages = counter_get (&store->count.written_back_pages),
    .written_back_reads = counter_get (&store->count.written_back_reads),
    .read_pages_written_back =
      counter_get (&store->count.read_pages_written_back),
    .writes_waited = counter_get (&store->count.writes_waited),
    .segments_cleaned = counter_get (&store->count.segments_cleaned),
    .writeback_budget_stops = counter_get (&store->count.writeback_budget_stops),
  };
  if (store->tier) {
    struct tier_stats t;
    tier_stats (store->tier, &t);
    s->backing_size_bytes = t.size_bytes;
    s->backing_used_bytes = t.used_bytes;
    s->backing_live_bytes = t.live_bytes;
    s->written_back_bytes = t.bytes_written;
    s->writeback_batches = t.batches;
    s->uring_submissions = t.submissions;
    s->backing_io_errors = t.io_errors;
    s->backing_enospc_errors = t.enospc_errors;
    s->backing_checksum_errors = t.checksum_errors;
    s->backing_stale_records = t.stale_records;
    writeback_budget_stats (store->writeback, s);
  }
  s->deferred_pages = deferred_queued_pages (store->deferred);
  auto_compact_stats (store->auto_compact, s);
  s->pages_stored = store_pages_stored (store);
  s->original_bytes = s->pages_stored * CSWAP_PAGE_SIZE;
}

void
store_note_request (struct store *store, enum store_request kind, uint64_t ns)
{
  latency_record (&store->request_latency[kind], ns);
}

void
store_request_latency (struct store *store, enum store_request kind,
                       struct latency_summary *summary)
{
  latency_summarise (&store->request_latency[kind], summary);
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
