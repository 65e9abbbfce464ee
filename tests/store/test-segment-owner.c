/* cswap: a store's segment is its own user's (issue 62, items 5 and 6).
 *
 * Another local user (nobody, a forked child that drops to uid 65534)
 * tries what a user on the same machine could:
 *  - hold a segment where the daemon's would be (layout 2's key for the
 *    device, attached): the daemon must still start (item 5);
 *  - leave such a segment unattached: neither a new store nor
 *    store_segment_remove_device (cswap-ublk --delete-dead) may remove
 *    it (item 5);
 *  - make a perfect copy of the daemon's store, with its header and its
 *    pages, mode 0666 (at the key, and IPC_PRIVATE), and one of mode
 *    0600 given to root (IPC_SET: the owner changes, the creator does
 *    not): the daemon taking over must adopt none of them, and none of
 *    them may be removed (item 6).
 * Root only (setresuid); skipped without a locked segment.
 *
 * Built with -DOLD_API against the store before the fix (a key per
 * device, store_segment_key) it fails: that is how it was shown to.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "page.h"
#include "store.h"
#include "store-segment.h"
#include "tap.h"

#define DEVICE_PAGES 1024
#define NOBODY 65534

/* A device number of the test's own, clear of ublk's (below 2^20)
 * but for its low 24 bits, which name layout 2's key.
 */
static uint32_t device;

#ifdef OLD_API
#define SEGMENT_OF_DEVICE .segment_key = store_segment_key (device)
#else
#define SEGMENT_OF_DEVICE .segment_device = device
#endif

/* Layout 2's key for the test's device (store-segment.c). */
static key_t
layout_2_key (void)
{
  return (key_t) (0x63000000 | (device & 0xffffff));
}

static struct store *
open_store (enum store_persistence persistence)
{
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
    .persistence = persistence,
    SEGMENT_OF_DEVICE,
  };

  return store_create (&config);
}

/* The segments nobody made, removed at the end by the test (as root). */
static int nobody_ids[8], nobody_count;

static void
remove_nobody_segments (void)
{
  for (int i = 0; i < nobody_count; i++)
    shmctl (nobody_ids[i], IPC_RMID, NULL);
  nobody_count = 0;
}

/* Root's own segments of the test's device: any that is left. */
static void
remove_own (void)
{
#ifdef OLD_API
  int shmid = shmget (store_segment_key (device), 0, 0);
  struct shmid_ds ds;

  if (shmid != -1 && shmctl (shmid, IPC_STAT, &ds) == 0
      && ds.shm_perm.cuid == 0)
    shmctl (shmid, IPC_RMID, NULL);
#else
  store_segment_remove_device (device);
#endif
}

static void
cleanup (void)
{
  remove_nobody_segments ();
  remove_own ();
}

/* As nobody, in a child: makes a segment of BYTES at KEY with MODE
 * holding COPY (if not NULL), gives it to root if GIVE, and attaches it
 * until told (HOLD: the child waits on its stdin pipe).  Its id goes to
 * the parent on REPORT.
 */
struct as_nobody {
  key_t key;
  size_t bytes;
  int mode;
  const void *copy;
  bool give, hold;
};

static pid_t
run_as_nobody (const struct as_nobody *a, int *shmid, int *release_fd)
{
  int report[2], release[2];
  pid_t pid;

  if (pipe (report) == -1 || pipe (release) == -1)
    tap_bail_out ("pipe: %m");
  pid = fork ();
  if (pid == -1)
    tap_bail_out ("fork: %m");
  if (pid == 0) {
    int id = -1;
    char c;

    close (report[0]);
    close (release[1]);         /* the parent's close is the release */
    if (setresgid (NOBODY, NOBODY, NOBODY) == 0
        && setresuid (NOBODY, NOBODY, NOBODY) == 0)
      id = shmget (a->key, a->bytes, IPC_CREAT | IPC_EXCL | a->mode);
    if (id != -1 && (a->copy || a->hold)) {
      void *base = shmat (id, NULL, 0);
      if (base == (void *) -1)
        id = -1;
      else if (a->copy)
        memcpy (base, a->copy, a->bytes);
    }
    if (id != -1 && a->give) {
      struct shmid_ds ds;
      shmctl (id, IPC_STAT, &ds);
      ds.shm_perm.uid = 0;
      ds.shm_perm.gid = 0;
      ds.shm_perm.mode = 0600;
      if (shmctl (id, IPC_SET, &ds) == -1)
        id = -1;
    }
    if (write (report[1], &id, sizeof id) != sizeof id)
      _exit (1);
    if (a->hold)
      (void) !read (release[0], &c, 1);
    _exit (0);
  }
  close (report[1]);
  close (release[0]);
  if (read (report[0], shmid, sizeof *shmid) != sizeof *shmid)
    *shmid = -1;
  close (report[0]);
  if (*shmid != -1)
    nobody_ids[nobody_count++] = *shmid;
  if (a->hold)
    *release_fd = release[1];
  else {
    close (release[1]);
    waitpid (pid, NULL, 0);
  }
  return pid;
}

static bool
exists_as_nobodys (int shmid)
{
  struct shmid_ds ds;

  return shmctl (shmid, IPC_STAT, &ds) == 0 && ds.shm_perm.cuid == NOBODY;
}

/* Item 5: a segment of nobody's where the daemon's could be. */
static void
test_squatter (void)
{
  struct as_nobody held = { .key = layout_2_key (), .bytes = 4096,
                            .mode = 0666, .hold = true };
  struct store *store;
  int shmid, release_fd = -1;
  pid_t pid = run_as_nobody (&held, &shmid, &release_fd);

  if (shmid == -1)
    tap_bail_out ("nobody could not make a segment");
  store = open_store (STORE_SEGMENT_NEW);
  ok (store != NULL, "nobody holding a segment at the device's old key "
      "does not keep a store from being made (%s)",
      store ? "made" : store_create_error ());
  store_destroy (store);
  close (release_fd);
  waitpid (pid, NULL, 0);
  ok (exists_as_nobodys (shmid), "and nobody's segment is untouched");

  /* Unattached now: a store made for the device, and the cleaner, must
   * leave it all the same.
   */
  store = open_store (STORE_SEGMENT_NEW);
  ok (store != NULL && exists_as_nobodys (shmid),
      "unattached, it is not removed by a new store of the device");
  store_destroy (store);
#ifndef OLD_API
  store_segment_remove_device (device);
#endif
  ok (exists_as_nobodys (shmid),
      "nor by the dead daemon's cleaner (--delete-dead)");
  remove_nobody_segments ();
}

/* Item 6: copies of the daemon's store, made by nobody. */
static void
test_impostors (void)
{
  unsigned char page[CSWAP_PAGE_SIZE], got[CSWAP_PAGE_SIZE];
  struct store *store = open_store (STORE_SEGMENT_NEW);
  const struct store_adoption *adoption;
  struct shmid_ds ds;
  unsigned char *copy;
  int shmid = -1, ids[3], release_fd;

  for (size_t i = 0; i < sizeof page; i++)
    page[i] = (unsigned char) (i * 31 + 7);
  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  store_write (store, page, CSWAP_PAGE_SIZE, 5 * CSWAP_PAGE_SIZE);
  store_keep_on_destroy (store);
  store_destroy (store);
  /* Root's store, copied whole, then removed: what nobody would copy
   * from a page it read, or write by hand, header and all.
   */
#ifdef OLD_API
  shmid = shmget (store_segment_key (device), 0, 0);
#else
  {
    int highest = shmctl (0, SHM_INFO, (struct shmid_ds *) &(struct shm_info) { 0 });
    for (int index = 0; index <= highest && shmid == -1; index++) {
      int id = shmctl (index, SHM_STAT, &ds);
      unsigned char *base;
      if (id == -1 || ds.shm_perm.cuid != 0)
        continue;
      base = shmat (id, NULL, SHM_RDONLY);
      if (base == (void *) -1)
        continue;
      /* The header's device (store-segment.c's layout 3). */
      if (memcmp (base, "cswapseg", 8) == 0
          && memcmp (base + 48, &device, sizeof device) == 0)
        shmid = id;
      shmdt (base);
    }
  }
#endif
  if (shmid == -1 || shmctl (shmid, IPC_STAT, &ds) == -1)
    tap_bail_out ("root's store's segment not found");
  copy = malloc (ds.shm_segsz);
  {
    void *base = shmat (shmid, NULL, SHM_RDONLY);
    if (copy == NULL || base == (void *) -1)
      tap_bail_out ("copy: %m");
    memcpy (copy, base, ds.shm_segsz);
    shmdt (base);
  }
  shmctl (shmid, IPC_RMID, NULL);

  struct as_nobody keyed = { .key = layout_2_key (), .bytes = ds.shm_segsz,
                             .mode = 0666, .copy = copy };
  struct as_nobody private = { .key = IPC_PRIVATE, .bytes = ds.shm_segsz,
                               .mode = 0666, .copy = copy };
  struct as_nobody given = { .key = IPC_PRIVATE, .bytes = ds.shm_segsz,
                             .mode = 0600, .copy = copy, .give = true };
  run_as_nobody (&keyed, &ids[0], &release_fd);
  run_as_nobody (&private, &ids[1], &release_fd);
  run_as_nobody (&given, &ids[2], &release_fd);
  free (copy);
  if (ids[0] == -1 || ids[1] == -1 || ids[2] == -1)
    tap_bail_out ("nobody could not copy the store");

  store = open_store (STORE_SEGMENT_ADOPT);
  adoption = store ? store_adoption (store) : NULL;
  ok (adoption && !adoption->adopted,
      "a take-over adopts none of nobody's copies of its store (0666 at "
      "the old key, 0666 private, 0600 given to root) (%s)",
      adoption ? (adoption->adopted ? "adopted one" : adoption->why)
      : store_create_error ());
  ok (store && store_read (store, got, CSWAP_PAGE_SIZE,
                           5 * CSWAP_PAGE_SIZE) == 0
      && memcmp (got, page, CSWAP_PAGE_SIZE) != 0,
      "and the page is not served from them");
  store_destroy (store);
#ifndef OLD_API
  store_segment_remove_device (device);
#endif
  ok (exists_as_nobodys (ids[0]) && exists_as_nobodys (ids[1])
      && exists_as_nobodys (ids[2]),
      "and none of them is removed, by the store or the cleaner");
  remove_nobody_segments ();
}

int
main (void)
{
  struct store *probe;

  if (geteuid () != 0)
    tap_skip_all ("not root: another user is played by setresuid");
  device = 0x80000000u | ((uint32_t) getpid () & 0xfffff) | 0xe00000;
  atexit (cleanup);
  /* Where no segment can be locked, there is nothing to take. */
  probe = open_store (STORE_SEGMENT_NEW);
  if (probe == NULL) {
    diag ("store_create: %s", store_create_error ());
    tap_skip_all ("no store in a locked System V segment here");
  }
  store_destroy (probe);
  test_squatter ();
  test_impostors ();
  return tap_done ();
}
