/* cswap: the store's memory in a System V segment (see the header). */
#include <errno.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

#include "page.h"
#include "rounding.h"
#include "store-segment.h"

#ifndef SHM_NORESERVE
#define SHM_NORESERVE 010000    /* as MAP_NORESERVE: nothing committed */
#endif

/* The first bytes of a segment.  LAYOUT changes whenever anything in the
 * segment is laid out or encoded otherwise: the header, a slot chunk, a
 * slot's word or flags (slot-state.c), a zspage (allocator/), the note's
 * place or size.  2: the note.
 */
#define SEGMENT_MAGIC "cswapseg"
#define SEGMENT_LAYOUT 2
/* Where in the header page the front end's note starts. */
#define SEGMENT_NOTE_OFFSET (CSWAP_PAGE_SIZE - STORE_SEGMENT_NOTE_BYTES)

struct segment_header {
  char magic[8];
  uint32_t layout;
  uint32_t max_pages_per_zspage;
  uint64_t size_bytes;
  uint64_t reserve_bytes;
  uint64_t chunks_bytes;
  uint64_t area_bytes;
};
_Static_assert (sizeof (struct segment_header) <= SEGMENT_NOTE_OFFSET,
                "the header fits its page, before the note");

int
store_segment_key (uint32_t dev_id)
{
  /* "c" in the top byte keeps it clear of IPC_PRIVATE (0) and of most
   * keys ftok() makes from a file.
   */
  return 0x63000000 | (int) (dev_id & 0xffffff);
}

static size_t
segment_bytes (const struct store_segment *seg)
{
  return CSWAP_PAGE_SIZE + round_up (seg->chunks_bytes, CSWAP_PAGE_SIZE)
    + round_up (seg->area_bytes, CSWAP_PAGE_SIZE);
}

static struct segment_header
header_for (const struct store_segment *seg)
{
  struct segment_header h = {
    .layout = SEGMENT_LAYOUT,
    .max_pages_per_zspage = seg->max_pages_per_zspage,
    .size_bytes = seg->size_bytes,
    .reserve_bytes = seg->reserve_bytes,
    .chunks_bytes = seg->chunks_bytes,
    .area_bytes = seg->area_bytes,
  };

  memcpy (h.magic, SEGMENT_MAGIC, sizeof h.magic);
  return h;
}

void *
store_segment_note (const struct store_segment *seg)
{
  return seg->base + SEGMENT_NOTE_OFFSET;
}

void *
store_segment_chunks (const struct store_segment *seg)
{
  return seg->base + CSWAP_PAGE_SIZE;
}

void *
store_segment_area (const struct store_segment *seg)
{
  return seg->base + CSWAP_PAGE_SIZE
    + round_up (seg->chunks_bytes, CSWAP_PAGE_SIZE);
}

/* Attaches SEG->shmid, locked: 0, or -1 with errno and *WHY. */
static int
attach (struct store_segment *seg, const char **why)
{
  void *base;

  /* Locked before it is used: every page it will ever hold is then
   * unevictable, whoever faults it in.
   */
  if (shmctl (seg->shmid, SHM_LOCK, NULL) == -1) {
    *why = "shmctl SHM_LOCK (needs CAP_IPC_LOCK or RLIMIT_MEMLOCK)";
    return -1;
  }
  base = shmat (seg->shmid, NULL, 0);
  if (base == (void *) -1) {
    *why = "shmat";
    return -1;
  }
  seg->base = base;
  /* Core dumps: the pool's pages are other programs' memory (pool.c). */
  madvise (base, seg->bytes, MADV_DONTDUMP);
  return 0;
}

/* The segment at KEY, with *ATTACHED its processes: its id, or -1 with
 * errno (ENOENT: none).
 */
static int
find (int key, unsigned long *attached, size_t *bytes)
{
  struct shmid_ds ds;
  int shmid = shmget (key, 0, 0);

  if (shmid == -1 || shmctl (shmid, IPC_STAT, &ds) == -1)
    return -1;
  *attached = ds.shm_nattch;
  *bytes = ds.shm_segsz;
  return shmid;
}

int
store_segment_remove_key (int key)
{
  unsigned long attached;
  size_t bytes;
  int shmid = find (key, &attached, &bytes);

  if (shmid == -1)
    return errno == ENOENT ? 0 : -1;
  if (attached) {
    errno = EBUSY;
    return -1;
  }
  return shmctl (shmid, IPC_RMID, NULL) == -1 ? -1 : 1;
}

int
store_segment_make (struct store_segment *seg, const char **why)
{
  struct segment_header header = header_for (seg);
  int saved_errno;

  seg->bytes = segment_bytes (seg);
  seg->base = NULL;
  if (store_segment_remove_key (seg->key) == -1) {
    *why = errno == EBUSY ? "a segment at its key is in use by a live process"
      : "shmctl IPC_RMID of a stale segment";
    return -1;
  }
  seg->shmid = shmget (seg->key, seg->bytes,
                       IPC_CREAT | IPC_EXCL | SHM_NORESERVE | 0600);
  if (seg->shmid == -1) {
    *why = "shmget";
    return -1;
  }
  if (attach (seg, why) == -1) {
    saved_errno = errno;
    shmctl (seg->shmid, IPC_RMID, NULL);
    seg->shmid = -1;
    errno = saved_errno;
    return -1;
  }
  /* Last: a segment whose header is written is whole (the rest of it
   * is zeros from the kernel).
   */
  memcpy (seg->base, &header, sizeof header);
  return 0;
}

int
store_segment_adopt (struct store_segment *seg, const char **why)
{
  struct segment_header want = header_for (seg);
  unsigned long attached;
  size_t bytes;

  seg->bytes = segment_bytes (seg);
  seg->base = NULL;
  seg->shmid = find (seg->key, &attached, &bytes);
  if (seg->shmid == -1) {
    *why = errno == ENOENT ? "no segment at its key" : "shmget";
    return -1;
  }
  if (attached) {
    *why = "its segment is attached by a live process";
    errno = EBUSY;
    goto fail;
  }
  if (bytes != seg->bytes) {
    *why = "its segment was made for another size or configuration";
    errno = EINVAL;
    goto fail;
  }
  if (attach (seg, why) == -1)
    goto fail;
  if (memcmp (seg->base, &want, sizeof want) != 0) {
    *why = "its segment was made for another size, configuration or "
      "version of cswap";
    shmdt (seg->base);
    seg->base = NULL;
    errno = EINVAL;
    goto fail;
  }
  return 0;
 fail:
  seg->shmid = -1;
  return -1;
}

void
store_segment_unlock_mapping (const struct store_segment *seg)
{
  if (seg->base)
    munlock (seg->base, seg->bytes);
}

void
store_segment_close (struct store_segment *seg, bool remove)
{
  if (seg->base)
    shmdt (seg->base);
  if (remove && seg->shmid != -1)
    shmctl (seg->shmid, IPC_RMID, NULL);
  seg->base = NULL;
  seg->shmid = -1;
}
