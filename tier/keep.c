/* cswap: the tier's state kept for a successor (see tier.h,
 * tier_keep_state).
 *
 * The state is the store's to place (in its segment, which is locked
 * and outlives the process); its layout is this file's.  What a record
 * needs to be read is all here: the file is the same (device and inode,
 * not the path: a file put in its place is another one, and its records
 * are refused), the run id and key that made its records, the count of
 * nonces spent under that key (reserved ahead: record.c), and the
 * generation of each segment, which a record's check covers.  The magic
 * is written last, so a state a kill interrupted is not one.
 *
 * No lock: called once, before the tier's first batch.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "tier-internal.h"

#define STATE_MAGIC "cswaptir"
#define STATE_VERSION 1

struct tier_state {
  char magic[8];
  uint32_t version;
  uint32_t segments;             /* the file's size, in segments */
  uint64_t file_dev, file_ino;
  uint32_t run_id;
  uint32_t sealed;              /* 1: records sealed under KEY */
  uint64_t nonces_reserved;     /* record_format.reserved */
  unsigned char key[SEAL_KEY_BYTES];
  uint32_t generation[];        /* one a segment */
};

size_t
tier_state_bytes (struct tier *tier)
{
  return sizeof (struct tier_state)
    + (size_t) tier_segment_count (tier) * sizeof (uint32_t);
}

/* Why STATE, a killed daemon's, is not this tier's to take over (the
 * file FILE of SEGMENTS), or NULL.
 */
static const char *
state_problem (const struct tier_state *state, const struct stat *file,
               uint32_t segments)
{
  if (memcmp (state->magic, STATE_MAGIC, sizeof state->magic) != 0)
    return "the killed daemon kept no state of its backing file";
  if (state->version != STATE_VERSION)
    return "its backing file's state was kept by another version of cswap";
  if (state->file_dev != (uint64_t) file->st_dev
      || state->file_ino != (uint64_t) file->st_ino)
    return "the backing file is not the one the killed daemon wrote "
      "(another file at its path)";
  if (state->segments != segments)
    return "the backing file has another size than the killed daemon's";
  return NULL;
}

/* STATE made this tier's, afresh: nothing of a killed daemon's in it. */
static void
keep_fresh (struct tier *tier, struct tier_state *state,
            const struct stat *file)
{
  struct record_format *format = tier_format (tier);

  memset (state->magic, 0, sizeof state->magic);
  state->version = STATE_VERSION;
  state->segments = tier_segment_count (tier);
  state->file_dev = file->st_dev;
  state->file_ino = file->st_ino;
  state->run_id = format->run_id;
  state->sealed = format->seal != NULL;
  if (format->seal)
    seal_copy_key (format->seal, state->key);
  else
    memset (state->key, 0, sizeof state->key);
  record_format_keep (format, &state->nonces_reserved);
  tier_use_generations (tier, state->generation, false);
  memcpy (state->magic, STATE_MAGIC, sizeof state->magic);
}

int
tier_keep_state (struct tier *tier, void *state_bytes, bool adopt,
                 const char **why)
{
  struct tier_state *state = state_bytes;
  struct stat file;

  *why = NULL;
  if (fstat (tier_file (tier), &file) == -1) {
    *why = "backing file: fstat";
    return -1;
  }
  if (adopt) {
    const char *problem = state_problem (state, &file,
                                         tier_segment_count (tier));
    if (problem == NULL) {
      if (record_format_adopt (tier_format (tier), state->run_id,
                               state->sealed ? state->key : NULL,
                               &state->nonces_reserved, why) == -1)
        return -1;
      tier_use_generations (tier, state->generation, true);
      return 1;
    }
    /* A state never written (a kill before it was) is no loss to name. */
    if (memcmp (state->magic, "\0\0\0\0\0\0\0\0", sizeof state->magic))
      *why = problem;
  }
  keep_fresh (tier, state, &file);
  return 0;
}
