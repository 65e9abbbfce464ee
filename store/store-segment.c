/* cswap: the store's memory in a System V segment (see the header). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

#include "page.h"
#include "rounding.h"
#include "small-file.h"
#include "store-segment.h"

#ifndef SHM_NORESERVE
#define SHM_NORESERVE 010000    /* as MAP_NORESERVE: nothing committed */
#endif

/* The first bytes of a segment.  LAYOUT changes whenever anything in the
 * segment is laid out or encoded otherwise: the header, a slot chunk, a
 * slot's word or flags (slot-state.c), a zspage (allocator/), the note's
 * place or size, the lost map.  2: the note.  3: the lost map, the
 * device in the header, IPC_PRIVATE (2 was found at a key).  4: the
 * backing file's state.
 */
#define SEGMENT_MAGIC "cswapseg"
#define SEGMENT_LAYOUT 4
/* Layout 4 is layout 3 with room for the backing file's state: a store
 * without a backing file is laid out, and marked, as layout 3 was, so
 * that either version takes over the other's.
 */
#define SEGMENT_LAYOUT_WITHOUT_TIER 3
/* Layout 2's key for the store of device DEV: "c" in the top byte. */
#define LAYOUT_2_KEY(dev) ((key_t) (0x63000000 | ((dev) & 0xffffff)))
/* Where in the header page the front end's note starts. */
#define SEGMENT_NOTE_OFFSET (CSWAP_PAGE_SIZE - STORE_SEGMENT_NOTE_BYTES)

/* Layout 2's fields first, in their places, so that a segment of either
 * says which it is; from layout 3 on, dev_id stays where it is, so that
 * a later layout's segment is known as the device's (and refused, named).
 */
struct segment_header {
  char magic[8];
  uint32_t layout;
  uint32_t max_pages_per_zspage;
  uint64_t size_bytes;
  uint64_t reserve_bytes;
  uint64_t chunks_bytes;
  uint64_t area_bytes;
  /* 3 */
  uint32_t dev_id;
  uint32_t unused;
  uint64_t made_ns;             /* CLOCK_BOOTTIME: the newest is the store */
  uint64_t lost_map_bytes;
  /* 4: zero in layout 3's header, which had nothing here */
  uint64_t tier_state_bytes;
};
_Static_assert (sizeof (struct segment_header) <= SEGMENT_NOTE_OFFSET,
                "the header fits its page, before the note");

uint32_t
store_segment_layout (void)
{
  return SEGMENT_LAYOUT;
}

static size_t
segment_bytes (const struct store_segment *seg)
{
  return CSWAP_PAGE_SIZE + round_up (seg->lost_map_bytes, CSWAP_PAGE_SIZE)
    + round_up (seg->tier_state_bytes, CSWAP_PAGE_SIZE)
    + round_up (seg->chunks_bytes, CSWAP_PAGE_SIZE)
    + round_up (seg->area_bytes, CSWAP_PAGE_SIZE);
}

static uint64_t
boottime_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_BOOTTIME, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static struct segment_header
header_for (const struct store_segment *seg)
{
  struct segment_header h = {
    .layout = seg->tier_state_bytes ? SEGMENT_LAYOUT
                                    : SEGMENT_LAYOUT_WITHOUT_TIER,
    .max_pages_per_zspage = seg->max_pages_per_zspage,
    .size_bytes = seg->size_bytes,
    .reserve_bytes = seg->reserve_bytes,
    .chunks_bytes = seg->chunks_bytes,
    .area_bytes = seg->area_bytes,
    .dev_id = seg->dev_id,
    .made_ns = boottime_ns (),
    .lost_map_bytes = seg->lost_map_bytes,
    .tier_state_bytes = seg->tier_state_bytes,
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
store_segment_lost_map (const struct store_segment *seg)
{
  return seg->base + CSWAP_PAGE_SIZE;
}

static unsigned char *
tier_state_at (const struct store_segment *seg)
{
  return (unsigned char *) store_segment_lost_map (seg)
    + round_up (seg->lost_map_bytes, CSWAP_PAGE_SIZE);
}

void *
store_segment_tier_state (const struct store_segment *seg)
{
  return seg->tier_state_bytes ? tier_state_at (seg) : NULL;
}

void *
store_segment_chunks (const struct store_segment *seg)
{
  return tier_state_at (seg) + round_up (seg->tier_state_bytes,
                                         CSWAP_PAGE_SIZE);
}

void *
store_segment_area (const struct store_segment *seg)
{
  return (unsigned char *) store_segment_chunks (seg)
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

/* ------------------------------------------------- finding one's own -- */

/* The segment DS describes is this process's own: created and owned by
 * its effective uid (a user may give a segment away, IPC_SET, but not
 * its creator), mode 0600, not marked for removal, a header's size.
 * Anything else may be another user's, made to be adopted or to be
 * removed: never touched.
 */
static bool
is_own (const struct shmid_ds *ds)
{
  uid_t me = geteuid ();

  return ds->shm_perm.cuid == me && ds->shm_perm.uid == me
    && (ds->shm_perm.mode & 0777) == 0600
    && !(ds->shm_perm.mode & SHM_DEST)
    && ds->shm_segsz >= CSWAP_PAGE_SIZE;
}

/* The header of segment SHMID, read through a read-only mapping:
 * 0, or -1.
 */
static int
peek_header (int shmid, struct segment_header *h)
{
  void *base = shmat (shmid, NULL, SHM_RDONLY);

  if (base == (void *) -1)
    return -1;
  memcpy (h, base, sizeof *h);
  shmdt (base);
  return memcmp (h->magic, SEGMENT_MAGIC, sizeof h->magic) == 0 ? 0 : -1;
}

/* The device a segment's header and key name: UINT32_MAX for none. */
static uint32_t
device_of (const struct segment_header *h, key_t key)
{
  if (h->layout >= 3)
    return key == IPC_PRIVATE ? h->dev_id : UINT32_MAX;
  /* Layout 2 was found at its key: a segment at another is not one. */
  if ((key & 0xff000000) == 0x63000000)
    return (uint32_t) key & 0xffffff;
  return UINT32_MAX;
}

/* Every own segment (is_own, with a cswap header), with its stat and
 * header.  0, or -1 with errno.
 */
static int
each_own (void (*each) (int shmid, const struct shmid_ds *ds,
                        const struct segment_header *h, void *arg),
          void *arg)
{
  struct shm_info info;
  int highest = shmctl (0, SHM_INFO, (struct shmid_ds *) &info);

  if (highest == -1)
    return -1;
  /* SHM_STAT takes an index into the kernel's table, not an id; an
   * index freed meanwhile fails (EINVAL), one reused is checked as any.
   */
  for (int index = 0; index <= highest; index++) {
    struct shmid_ds ds;
    struct segment_header h;
    int shmid = shmctl (index, SHM_STAT, &ds);

    if (shmid == -1 || !is_own (&ds) || peek_header (shmid, &h) == -1)
      continue;
    each (shmid, &ds, &h, arg);
  }
  return 0;
}

struct each_public {
  void (*each) (int shmid, uint32_t dev_id, uint32_t layout, void *arg);
  void *arg;
};

static void
each_public (int shmid, const struct shmid_ds *ds,
             const struct segment_header *h, void *arg)
{
  struct each_public *p = arg;

  p->each (shmid, device_of (h, ds->shm_perm.__key), h->layout, p->arg);
}

int
store_segment_each_own (void (*each) (int shmid, uint32_t dev_id,
                                      uint32_t layout, void *arg), void *arg)
{
  struct each_public p = { each, arg };

  return each_own (each_public, &p);
}

/* ---------------------------------------------------------- removing -- */

struct removing {
  uint32_t dev_id;
  int keep;                     /* a shmid not to remove; -1: none */
  int removed;
};

static void
remove_one (int shmid, const struct shmid_ds *ds,
            const struct segment_header *h, void *arg)
{
  struct removing *r = arg;

  if (device_of (h, ds->shm_perm.__key) != r->dev_id || shmid == r->keep
      || ds->shm_nattch != 0)
    return;
  if (shmctl (shmid, IPC_RMID, NULL) == 0)
    r->removed++;
}

/* DEV_ID's own segments but KEEP, attached by no process, removed. */
static int
remove_device_but (uint32_t dev_id, int keep)
{
  struct removing r = { .dev_id = dev_id, .keep = keep };

  return each_own (remove_one, &r) == -1 ? -1 : r.removed;
}

int
store_segment_remove_device (uint32_t dev_id)
{
  return remove_device_but (dev_id, -1);
}

/* ---------------------------------------------------- make and adopt -- */

int
store_segment_make (struct store_segment *seg, const char **why)
{
  struct segment_header header;
  int saved_errno;

  seg->bytes = segment_bytes (seg);
  seg->base = NULL;
  if (remove_device_but (seg->dev_id, -1) == -1) {
    *why = "shmctl SHM_INFO";
    return -1;
  }
  /* IPC_PRIVATE: no key, so no other user can hold it first. */
  seg->shmid = shmget (IPC_PRIVATE, seg->bytes, SHM_NORESERVE | 0600);
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
   * is zeros from the kernel), and only then found as the device's.
   */
  header = header_for (seg);
  memcpy (seg->base, &header, sizeof header);
  return 0;
}

/* The newest of a device's own segments, and what adopting it meets. */
struct finding {
  uint32_t dev_id;
  int shmid;                    /* the newest of this layout; -1: none */
  struct segment_header header;
  struct shmid_ds ds;
  uint32_t other_layout;        /* 0, or one found of another layout */
};

static void
find_newest (int shmid, const struct shmid_ds *ds,
             const struct segment_header *h, void *arg)
{
  struct finding *f = arg;

  if (device_of (h, ds->shm_perm.__key) != f->dev_id)
    return;
  if (h->layout != SEGMENT_LAYOUT && h->layout != SEGMENT_LAYOUT_WITHOUT_TIER) {
    f->other_layout = h->layout;
    return;
  }
  /* The newest: the last daemon's.  Equal times (never seen): the first
   * in the kernel's table, so that every reader picks the same.
   */
  if (f->shmid == -1 || h->made_ns > f->header.made_ns) {
    f->shmid = shmid;
    f->header = *h;
    f->ds = *ds;
  }
}

int
store_segment_adopt (struct store_segment *seg,
                     struct store_segment_refusal *refusal)
{
  struct finding f = { .dev_id = seg->dev_id, .shmid = -1 };

  *refusal = (struct store_segment_refusal) { 0 };
  seg->base = NULL;
  seg->shmid = -1;
  if (each_own (find_newest, &f) == -1) {
    refusal->why = "shmctl SHM_INFO";
    return -1;
  }
  if (f.shmid == -1 && f.other_layout) {
    refusal->why = "it was made by another version of cswap";
    refusal->layout = f.other_layout;
    errno = EPROTO;
    return -1;
  }
  if (f.shmid == -1) {
    refusal->why = "no segment of its device";
    errno = ENOENT;
    return -1;
  }
  if (f.ds.shm_nattch) {
    refusal->why = "its segment is attached by a live process";
    refusal->pid = f.ds.shm_lpid;
    errno = EBUSY;
    return -1;
  }
  if (f.header.size_bytes != seg->size_bytes) {
    refusal->why = "it was made for another size";
    refusal->size_bytes = f.header.size_bytes;
    errno = EINVAL;
    return -1;
  }
  /* The allocator's geometry is the store's own: its zspages are laid
   * out by it, whatever this configuration would make.
   */
  seg->max_pages_per_zspage = f.header.max_pages_per_zspage;
  seg->reserve_bytes = f.header.reserve_bytes;
  seg->lost_map_bytes = f.header.lost_map_bytes;
  seg->tier_state_bytes = f.header.layout == SEGMENT_LAYOUT
    ? f.header.tier_state_bytes : 0;
  seg->chunks_bytes = f.header.chunks_bytes;
  seg->area_bytes = f.header.area_bytes;
  seg->bytes = segment_bytes (seg);
  if (f.ds.shm_segsz != seg->bytes) {
    refusal->why = "its segment's size is not what its header says";
    refusal->layout = f.header.layout;
    errno = EPROTO;
    return -1;
  }
  seg->shmid = f.shmid;
  if (attach (seg, &refusal->why) == -1) {
    seg->shmid = -1;
    return -1;
  }
  /* Older stores of the device: taken over anew since, never to be. */
  remove_device_but (seg->dev_id, seg->shmid);
  return 0;
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

bool
store_segment_forced_removal (void)
{
  char value[16];

  return read_small_file ("/proc/sys/kernel/shm_rmid_forced", value,
                          sizeof value) > 0 && value[0] == '1';
}
