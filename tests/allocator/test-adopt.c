/* cswap allocator: adoption (adopt.c) against a model.
 *
 * The test owner's table (handle, length and pattern seed by cookie) is
 * the model: what a store keeps in a slot table that outlives its
 * process.  The pool's zspage area is a MAP_SHARED | MAP_ANONYMOUS
 * mapping.  Random allocations, frees, rewrites and compactions run on
 * it; then the pool is killed: abandoned as a dead process leaves it (its
 * struct kept only so that LeakSanitizer does not count it, nothing freed
 * or destroyed), in one of the states a death can leave:
 *
 *  - between steps;
 *  - just after a zs_malloc the owner never published (an orphan);
 *  - after a move the owner did not see (a copy in a new allocation, the
 *    model keeping the old handle) or saw (the old copy not yet freed);
 *  - inside zs_compact: before taking an owner lock (zspages isolated)
 *    or inside the owner's retarget, before or after the owner switched
 *    (both copies allocated);
 *  - with warm zspages in the reserve.
 *
 * Half the time every byte of the model's zspages but the model's objects
 * is scribbled over first, headers and free lists included, as a death in
 * the middle of writing them could leave them.  A new pool with the same
 * config over the same area adopts exactly the model's handles, and then:
 * zs_pool_check passes, every object holds its pattern, the statistics
 * count the model's objects and zspages, no page of the area is resident
 * outside the model's zspages (mincore), and a class with a free slot
 * allocates into it without a new zspage.  The random steps go on over
 * the adopted pool, which is killed again: several generations.
 *
 * White-box in one place: a zspage's pages are found at the area's base
 * plus zs_handle_zspage () strides of max_pages_per_zspage pages.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tap.h"
#include "test-owner.h"

#define COOKIES 1500
/* Room for what a kill leaves besides the model's objects. */
#define MAX_OBJECTS 2000
#define GENERATIONS 12
#define STEPS_PER_GENERATION 3000
#define RESERVE_BYTES (32 * 4096)
#define MAX_DEAD_POOLS 256

static struct test_owner owner;
static uint64_t rng = 0x2545f4914f6cdd1d;
static struct zs_pool *dead_pools[MAX_DEAD_POOLS];
static unsigned dead_pool_count;

/* Killing inside zs_compact: the owner callbacks count down and jump. */
static jmp_buf kill_point;
static unsigned kill_countdown;
static int kill_where;

static size_t
stride_bytes (void)
{
  unsigned max_pages = owner.config.max_pages_per_zspage;

  return (size_t) (max_pages ? max_pages : ZS_DEFAULT_PAGES_PER_ZSPAGE)
    * 4096;
}

static unsigned char *
zspage_pages (zs_handle handle)
{
  return (unsigned char *) owner.config.shared_area
    + zs_handle_zspage (handle) * stride_bytes ();
}

static uint32_t
random_size (void)
{
  if (test_rand (&rng) % 8 == 0)   /* the huge class, more often */
    return zs_huge_class_size (owner.pool)
      + test_rand (&rng) % (ZS_MAX_OBJECT_SIZE
                            - zs_huge_class_size (owner.pool) + 1);
  return 1 + test_rand (&rng) % ZS_MAX_OBJECT_SIZE;
}

static uint64_t
model_objects (void)
{
  uint64_t n = 0;

  for (uint32_t cookie = 0; cookie < owner.cookies; cookie++)
    n += owner.handles[cookie] != ZS_HANDLE_NONE;
  return n;
}

/* The model's zspages: ids sorted, each with its pages. */
struct model_zspage {
  uint64_t id;
  unsigned pages;
};

static int
compare_zspages (const void *a, const void *b)
{
  const struct model_zspage *x = a, *y = b;

  return (x->id > y->id) - (x->id < y->id);
}

static size_t
model_zspages (struct model_zspage *zspages)
{
  size_t n = 0, distinct = 0;

  for (uint32_t cookie = 0; cookie < owner.cookies; cookie++)
    if (owner.handles[cookie] != ZS_HANDLE_NONE)
      zspages[n++] = (struct model_zspage) {
        zs_handle_zspage (owner.handles[cookie]),
        zs_new_zspage_pages (owner.pool, owner.sizes_bytes[cookie]),
      };
  qsort (zspages, n, sizeof *zspages, compare_zspages);
  for (size_t i = 0; i < n; i++)
    if (distinct == 0 || zspages[distinct - 1].id != zspages[i].id)
      zspages[distinct++] = zspages[i];
  return distinct;
}

/* Every object byte that is not the model's: garbage. */
static void
scribble_zspages (void)
{
  for (uint32_t cookie = 0; cookie < owner.cookies; cookie++)
    if (owner.handles[cookie] != ZS_HANDLE_NONE)
      memset (zspage_pages (owner.handles[cookie]), (int) test_rand (&rng),
              zs_new_zspage_pages (owner.pool, owner.sizes_bytes[cookie])
              * (size_t) 4096);
  for (uint32_t cookie = 0; cookie < owner.cookies; cookie++)
    if (owner.handles[cookie] != ZS_HANDLE_NONE)
      test_owner_rewrite (&owner, cookie, owner.seeds[cookie]);
}

/* Pages of the area resident; *OUTSIDE: of them, those outside the
 * COUNT zspages of ZSPAGES.
 */
static size_t
pages_resident (const struct model_zspage *zspages, size_t count,
                size_t *outside)
{
  size_t area_bytes = zs_pool_area_bytes (&owner.config);
  size_t pages = area_bytes / 4096, resident_pages = 0;
  unsigned char *resident = malloc (pages);

  if (resident == NULL
      || mincore (owner.config.shared_area, area_bytes, resident) == -1)
    tap_bail_out ("mincore: %m");
  *outside = 0;
  for (size_t page = 0; page < pages; page++) {
    struct model_zspage key = { page * 4096 / stride_bytes (), 0 };
    const struct model_zspage *live = NULL;

    if (!(resident[page] & 1))
      continue;
    resident_pages++;
    if (count)
      live = bsearch (&key, zspages, count, sizeof *zspages, compare_zspages);
    if (live == NULL || page * 4096 % stride_bytes () / 4096 >= live->pages)
      if ((*outside)++ < 4 && count)
        diag ("page %zu (zspage %" PRIu64 ") resident", page, key.id);
  }
  free (resident);
  return resident_pages;
}

/* Each class with a free slot in an adopted zspage fills it first. */
static bool
free_slots_reused (void)
{
  for (unsigned i = 0; i + 1 < zs_class_count (owner.pool); i++) {
    struct zs_class_stats class_stats;
    uint64_t pages_before = zs_pool_pages_used (owner.pool);
    zs_handle handle;

    zs_class_stats (owner.pool, i, &class_stats);
    if (class_stats.objects_allocated == class_stats.objects_used)
      continue;
    handle = zs_malloc (owner.pool, class_stats.size - 4, 0);
    if (handle == ZS_HANDLE_NONE
        || zs_pool_pages_used (owner.pool) != pages_before) {
      diag ("class %u: a new zspage despite %" PRIu64 " free slots", i,
            class_stats.objects_allocated - class_stats.objects_used);
      return false;
    }
    zs_free (owner.pool, handle);
    if (zs_pool_pages_used (owner.pool) != pages_before)
      return false;
  }
  return true;
}

/* Abandons the pool as a dead process leaves it, and makes a new one
 * adopt the model's objects.
 */
static void
kill_and_adopt (const char *how)
{
  bool scribble = test_rand (&rng) % 2;
  struct model_zspage *zspages = malloc (owner.cookies * sizeof *zspages);
  struct zs_pool_stats stats;
  uint64_t objects = model_objects ();
  uint64_t pages = 0;
  size_t zspage_count, stray;
  bool adopted = true;

  if (zspages == NULL || dead_pool_count == MAX_DEAD_POOLS)
    tap_bail_out ("out of room for dead pools");
  if (scribble)
    scribble_zspages ();
  dead_pools[dead_pool_count++] = owner.pool;
  owner.pool = zs_pool_create (&owner.config);
  if (owner.pool == NULL)
    tap_bail_out ("zs_pool_create: %m");
  for (uint32_t cookie = 0; cookie < owner.cookies; cookie++)
    if (owner.handles[cookie] != ZS_HANDLE_NONE
        && zs_pool_adopt_object (owner.pool, owner.handles[cookie],
                                 owner.sizes_bytes[cookie], cookie) == -1) {
      diag ("cookie %u: zs_pool_adopt_object: %m", cookie);
      adopted = false;
    }
  zs_pool_adopt_end (owner.pool);

  zspage_count = model_zspages (zspages);
  for (size_t i = 0; i < zspage_count; i++)
    pages += zspages[i].pages;
  zs_pool_stats (owner.pool, &stats);
  pages_resident (zspages, zspage_count, &stray);
  free (zspages);
  if (stats.objects_used != objects || stats.pages_used != pages
      || stats.zspages != zspage_count)
    diag ("pool: %" PRIu64 " objects, %" PRIu64 " pages, %" PRIu64
          " zspages; model: %" PRIu64 ", %" PRIu64 ", %zu",
          stats.objects_used, stats.pages_used, stats.zspages, objects,
          pages, zspage_count);
  ok (adopted && zs_pool_check (owner.pool) == 0
      && test_owner_verify_all (&owner) && stats.objects_used == objects
      && stats.pages_used == pages && stats.zspages == zspage_count
      && stats.reserve_pages == 0 && stray == 0 && free_slots_reused ()
      && zs_pool_check (owner.pool) == 0,
      "killed %s%s: %" PRIu64 " objects in %zu zspages adopted", how,
      scribble ? ", area scribbled" : "", objects, zspage_count);
}

static void
kill_hook_lock (struct test_owner *o, uint32_t cookie)
{
  (void) o, (void) cookie;
  if (kill_where == 1 && --kill_countdown == 0)
    longjmp (kill_point, 1);
}

static void
kill_hook_retarget (struct test_owner *o, uint32_t cookie, zs_handle from,
                    zs_handle to)
{
  (void) from;
  if (kill_where == 2 && --kill_countdown == 0) {
    if (test_rand (&rng) % 2)
      o->handles[cookie] = to;  /* the owner saw it; FROM is not freed */
    test_owner_unlock (o, cookie);
    longjmp (kill_point, 1);
  }
}

/* Frees about half the objects: work for compaction. */
static void
fragment (void)
{
  for (uint32_t cookie = 0; cookie < owner.cookies; cookie++)
    if (test_rand (&rng) % 2)
      test_owner_drop (&owner, cookie);
}

/* Compacts, dying at the COUNTDOWN-th owner callback of kind WHERE (1:
 * before an owner lock, 2: in a retarget) if it comes.  Returns whether
 * it died.
 */
static bool
compact_until_killed (int where, unsigned countdown)
{
  fragment ();
  kill_where = where;
  kill_countdown = countdown;
  if (setjmp (kill_point) == 0) {
    zs_compact (owner.pool, NULL);
    kill_where = 0;
    return false;
  }
  kill_where = 0;
  return true;
}

/* A live cookie, or COOKIES if there is none. */
static uint32_t
random_live_cookie (void)
{
  for (unsigned tries = 0; tries < 100; tries++) {
    uint32_t cookie = test_rand (&rng) % owner.cookies;

    if (owner.handles[cookie] != ZS_HANDLE_NONE)
      return cookie;
  }
  return owner.cookies;
}

/* Copies COOKIE's object into a new allocation, as a move does, and
 * returns the copy's handle (the owner not told).
 */
static zs_handle
copy_object (uint32_t cookie)
{
  zs_handle copy = zs_malloc (owner.pool, owner.sizes_bytes[cookie], cookie);

  if (copy == ZS_HANDLE_NONE)
    tap_bail_out ("zs_malloc: %m");
  memcpy (zs_object (owner.pool, copy),
          zs_object (owner.pool, owner.handles[cookie]),
          owner.sizes_bytes[cookie]);
  return copy;
}

/* Brings the pool to one of the states a death leaves, the KIND-th, and
 * adopts.
 */
static void
kill_somehow (unsigned kind)
{
  uint32_t cookie = random_live_cookie ();
  zs_handle orphan;

  if (cookie == owner.cookies)
    kind = 0;
  switch (kind % 6) {
  case 0:
    kill_and_adopt ("between steps");
    break;
  case 1:
    orphan = zs_malloc (owner.pool, random_size (), test_rand (&rng) % 7);
    if (orphan == ZS_HANDLE_NONE)
      tap_bail_out ("zs_malloc: %m");
    memset (zs_object (owner.pool, orphan), 0xa5, 1);
    kill_and_adopt ("after an unpublished zs_malloc");
    break;
  case 2:
    copy_object (cookie);
    kill_and_adopt ("after a move the owner did not see");
    break;
  case 3:
    owner.handles[cookie] = copy_object (cookie);
    kill_and_adopt ("after a move the owner saw, the old copy not freed");
    break;
  case 4:
    kill_and_adopt (compact_until_killed (1, 1 + test_rand (&rng) % 20)
                    ? "in zs_compact, before an owner lock"
                    : "after zs_compact (no kill point reached)");
    break;
  default:
    kill_and_adopt (compact_until_killed (2, 1 + test_rand (&rng) % 20)
                    ? "in zs_compact, in the owner's retarget"
                    : "after zs_compact (no kill point reached)");
    break;
  }
}

/* Compaction, single-threaded, leaves nothing it could free. */
static bool
compact_fully (void)
{
  return zs_compact (owner.pool, NULL) == 0
    && test_classes_compacted (owner.pool, 0, zs_class_count (owner.pool) - 1);
}

/* One random step.  Returns false on a mismatch. */
static bool
step (void)
{
  uint32_t cookie = test_rand (&rng) % owner.cookies;
  unsigned op = test_rand (&rng) % 1000;

  if (op < 450) {
    if (!test_owner_store (&owner, cookie, random_size (), test_rand (&rng)))
      tap_bail_out ("zs_malloc: %m");
    return true;
  }
  if (op < 800) {
    if (!test_owner_verify (&owner, cookie))
      return false;
    test_owner_drop (&owner, cookie);
    return true;
  }
  if (op < 995)
    return test_owner_verify (&owner, cookie);
  return compact_fully ();
}

static void
test_generations (unsigned max_pages_per_zspage, unsigned steps)
{
  struct zs_pool_stats stats;

  test_owner_init_shared (&owner, COOKIES, MAX_OBJECTS, max_pages_per_zspage,
                          RESERVE_BYTES);
  owner.before_lock = kill_hook_lock;
  owner.before_retarget = kill_hook_retarget;
  diag ("max_pages_per_zspage %u: %zu MiB of area", max_pages_per_zspage,
        zs_pool_area_bytes (&owner.config) >> 20);
  for (unsigned generation = 0; generation < GENERATIONS; generation++) {
    unsigned i;

    for (i = 0; i < steps; i++)
      if (!step ())
        break;
    if (!ok (i == steps, "generation %u: %u random steps", generation, i))
      break;
    kill_somehow (generation);
  }
  for (uint32_t cookie = 0; cookie < owner.cookies; cookie++)
    test_owner_drop (&owner, cookie);
  zs_pool_stats (owner.pool, &stats);
  ok (zs_pool_check (owner.pool) == 0 && stats.zspages == 0
      && stats.pages_used == 0, "all freed: no pages left");
  test_owner_fini (&owner);
}

/* The pages of a dead pool's zspages that nobody names go back to the
 * kernel; those named stay.
 */
static void
test_memory_given_back (void)
{
  enum { OBJECTS = 64 };
  size_t huge = 0, resident_before, resident_after, outside;
  struct model_zspage zspages[OBJECTS];

  test_owner_init_shared (&owner, OBJECTS, OBJECTS, 0, RESERVE_BYTES);
  huge = zs_huge_class_size (owner.pool);
  for (uint32_t cookie = 0; cookie < OBJECTS; cookie++)
    if (!test_owner_store (&owner, cookie, huge, cookie + 1))
      tap_bail_out ("zs_malloc: %m");
  /* Freed ones go to the reserve, warm; dropped ones are forgotten. */
  for (uint32_t cookie = 0; cookie < OBJECTS / 4; cookie++)
    test_owner_drop (&owner, cookie);
  for (uint32_t cookie = OBJECTS / 4; cookie < OBJECTS / 2; cookie++)
    owner.handles[cookie] = ZS_HANDLE_NONE;
  resident_before = pages_resident (NULL, 0, &outside);
  kill_and_adopt ("with a quarter of its zspages in the reserve and a "
                  "quarter orphaned");
  resident_after = pages_resident (NULL, 0, &outside);
  ok (resident_before >= OBJECTS && resident_after == OBJECTS / 2
      && model_zspages (zspages) == OBJECTS / 2,
      "resident pages: %zu before adoption, %zu after, for %d objects",
      resident_before, resident_after, OBJECTS / 2);
  test_owner_fini (&owner);
}

static bool
adopt_fails (zs_handle handle, size_t size, uint32_t cookie)
{
  errno = 0;
  return zs_pool_adopt_object (owner.pool, handle, size, cookie) == -1
    && errno == EINVAL;
}

static void
test_bad_objects (void)
{
  struct zs_class_stats smallest;
  uint64_t capacity;
  size_t huge;

  test_owner_init_shared (&owner, 4, 100, 0, 0);
  capacity = zs_pool_area_bytes (&owner.config) / stride_bytes () - 1;
  zs_class_stats (owner.pool, 0, &smallest);
  huge = zs_huge_class_size (owner.pool);

  ok (adopt_fails (ZS_HANDLE_NONE, 1, 0), "handle 0: EINVAL");
  ok (adopt_fails (1, 1, 0), "zspage id 0: EINVAL");
  ok (adopt_fails ((capacity + 1) << 12, 1, 0), "zspage id past the "
      "capacity (%" PRIu64 "): EINVAL", capacity);
  ok (adopt_fails (UINT64_C (1) << 60, 1, 0), "handle past 44 bits: EINVAL");
  ok (adopt_fails (2 << 12, 0, 0) && adopt_fails (2 << 12, 4097, 0),
      "size 0 and 4097: EINVAL");
  ok (adopt_fails (2 << 12, 1, ZS_MAX_OWNER_COOKIE + 1u),
      "cookie too large: EINVAL");
  ok (adopt_fails (2 << 12 | smallest.objects_per_zspage, 1, 0),
      "object index %u in a class of %u objects: EINVAL",
      smallest.objects_per_zspage, smallest.objects_per_zspage);
  ok (adopt_fails (3 << 12 | 1, huge, 0), "huge object index 1: EINVAL");

  owner.handles[0] = 2 << 12 | 5;
  owner.sizes_bytes[0] = 1;
  owner.handles[1] = 3 << 12;
  owner.sizes_bytes[1] = huge;
  owner.handles[2] = capacity << 12 | 1;
  owner.sizes_bytes[2] = 100;
  ok (zs_pool_adopt_object (owner.pool, owner.handles[0], 1, 0) == 0
      && zs_pool_adopt_object (owner.pool, owner.handles[1], huge, 1) == 0
      && zs_pool_adopt_object (owner.pool, owner.handles[2], 100, 2) == 0,
      "a small, a huge and the highest zspage id adopted");
  ok (adopt_fails (2 << 12 | 5, 1, 3) && adopt_fails (3 << 12, huge, 3),
      "the same handle twice: EINVAL");
  ok (adopt_fails (2 << 12 | 6, huge, 3) && adopt_fails (2 << 12 | 6, 2000, 3)
      && adopt_fails (3 << 12, 1, 3),
      "a size of another class than the zspage's: EINVAL");
  ok (zs_pool_adopt_object (owner.pool, 2 << 12 | 1, 1, 3) == 0,
      "another slot of the same zspage adopted");
  owner.handles[3] = 2 << 12 | 1;
  owner.sizes_bytes[3] = 1;
  zs_pool_adopt_end (owner.pool);
  for (uint32_t cookie = 0; cookie < 4; cookie++)
    test_owner_rewrite (&owner, cookie, cookie + 1);

  struct zs_pool_stats stats;
  zs_pool_stats (owner.pool, &stats);
  ok (zs_pool_check (owner.pool) == 0 && stats.objects_used == 4
      && stats.zspages == 3, "the pool holds what was adopted and no more");
  ok (free_slots_reused () && test_owner_verify_all (&owner),
      "its free slots are used first");
  for (uint32_t cookie = 0; cookie < 4; cookie++)
    test_owner_drop (&owner, cookie);
  zs_pool_stats (owner.pool, &stats);
  ok (zs_pool_check (owner.pool) == 0 && stats.zspages == 0
      && stats.pages_used == 0, "all freed: no pages left");
  test_owner_fini (&owner);
}

int
main (void)
{
  unsigned steps = STEPS_PER_GENERATION * test_scale ();

  test_bad_objects ();
  test_memory_given_back ();
  test_generations (0, steps);
  test_generations (16, steps);
  test_generations (2, steps);
  return tap_done ();
}
