/* cswap: codec registry and per-thread codec state.
 *
 * Each thread that compresses or decompresses gets its own state for each
 * codec it uses, made on first use and freed by a pthread key destructor
 * when the thread exits (nbdkit ends its worker threads when a client
 * disconnects).  No lock anywhere: threads never share codec state.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"
#include "compress.h"
#include "codec.h"

static const struct codec_ops *const codecs[CODEC_COUNT] = {
  [CODEC_LZ4] = &codec_lz4_ops,
  [CODEC_ZSTD] = &codec_zstd_ops,
};

struct thread_states {
  void *state[CODEC_COUNT];
};

static pthread_key_t thread_states_key;
static pthread_once_t thread_states_key_once = PTHREAD_ONCE_INIT;
static __thread struct thread_states *thread_states;

static void
free_thread_states (void *opaque)
{
  struct thread_states *ts = opaque;
  for (int i = 0; i < CODEC_COUNT; i++)
    if (ts->state[i])
      codecs[i]->state_free (ts->state[i]);
  free (ts);
}

static void
make_thread_states_key (void)
{
  /* Failure leaves the key unusable; states are then never freed at thread
   * exit, a leak of a few KiB per thread rather than a wrong result.
   */
  pthread_key_create (&thread_states_key, free_thread_states);
}

/* Returns this thread's state for codec ID, or NULL if it cannot be made. */
static void *
thread_state (enum codec_id id)
{
  if (thread_states == NULL) {
    pthread_once (&thread_states_key_once, make_thread_states_key);
    thread_states = calloc (1, sizeof *thread_states);
    if (thread_states == NULL)
      return NULL;
    pthread_setspecific (thread_states_key, thread_states);
  }
  if (thread_states->state[id] == NULL)
    thread_states->state[id] = codecs[id]->state_new ();
  return thread_states->state[id];
}

int
codec_id_parse (const char *name, enum codec_id *id)
{
  for (int i = 0; i < CODEC_COUNT; i++) {
    if (strcmp (name, codecs[i]->name) == 0) {
      *id = i;
      return 0;
    }
  }
  return -1;
}

const char *
codec_name (enum codec_id id)
{
  return codecs[id]->name;
}

int
codec_default_level (enum codec_id id)
{
  return codecs[id]->default_level;
}

int
codec_check_level (enum codec_id id, int level, int *min, int *max)
{
  *min = codecs[id]->min_level;
  *max = codecs[id]->max_level;
  return level >= *min && level <= *max ? 0 : -1;
}

size_t
codec_compress_page (const struct codec_config *codec, const void *page,
                     void *dst, size_t huge_threshold)
{
  void *state = thread_state (codec->id);

  /* Without state (out of memory) the page is stored raw: slower to keep,
   * never wrong.  A capacity of huge_threshold - 1 makes the codec itself
   * give up as soon as the output cannot be small enough to be worth it.
   */
  if (state == NULL || huge_threshold <= 1)
    return 0;
  return codecs[codec->id]->compress (state, codec->level, page, dst,
                                      huge_threshold - 1);
}

int
codec_decompress_page (enum codec_id id, const void *src, size_t src_len,
                       void *page)
{
  void *state = thread_state (id);

  if (state == NULL)
    return -1;
  return codecs[id]->decompress (state, src, src_len, page)
    == (long) CSWAP_PAGE_SIZE ? 0 : -1;
}
