/* cswap: a store under kernel.shm_rmid_forced=1 (issue 62, item 7).
 *
 * Run by test-segment-forced.sh, which sets the sysctl (and puts it back):
 * store_segment_forced_removal says so, which is what cswap-ublk warns
 * of at start; and what it warns of is what happens: a store kept by a
 * process that then exits (as a killed daemon's is) is gone, and the
 * next one, taking over, has every page lost (read as EIO by the front
 * end), not zeros.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "page.h"
#include "store.h"
#include "store-segment.h"
#include "tap.h"

#define DEVICE_PAGES 256

static uint32_t device;

static struct store *
open_store (enum store_persistence persistence)
{
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, codec_default_level (CODEC_LZ4) },
    .persistence = persistence, .segment_device = device,
  };

  return store_create (&config);
}

static void
cleanup (void)
{
  store_segment_remove_device (device);
}

int
main (void)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  const struct store_adoption *adoption;
  struct store *store;
  _Atomic uint64_t *map;
  uint64_t pages = 0, set = 0;
  int status = -1;
  pid_t pid;

  if (!store_segment_forced_removal ())
    tap_skip_all ("kernel.shm_rmid_forced is not 1 (test-segment-forced.sh "
                  "sets it)");
  device = 0x80000000u | (uint32_t) getpid ();
  atexit (cleanup);
  ok (true, "store_segment_forced_removal says kernel.shm_rmid_forced=1");
  pid = fork ();
  if (pid == 0) {
    store = open_store (STORE_SEGMENT_NEW);
    if (store == NULL)
      _exit (errno == EPERM || errno == ENOMEM ? 77 : 1);
    memset (page, 0x5a, sizeof page);
    page[0] = 1;
    store_write (store, page, CSWAP_PAGE_SIZE, 3 * CSWAP_PAGE_SIZE);
    store_keep_on_destroy (store);
    store_destroy (store);
    _exit (0);                  /* as a killed daemon: the store is kept */
  }
  waitpid (pid, &status, 0);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    tap_skip_all ("no locked System V segment here");
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    tap_bail_out ("the child's store: status %#x", status);
  store = open_store (STORE_SEGMENT_ADOPT);
  adoption = store ? store_adoption (store) : NULL;
  ok (adoption && !adoption->adopted,
      "a store its exited maker kept is gone (%s)",
      adoption ? (adoption->adopted ? "adopted" : adoption->why)
      : store_create_error ());
  map = store ? store_lost_map (store, &pages) : NULL;
  for (uint64_t p = 0; map && p < pages; p++)
    set += map[p / 64] >> p % 64 & 1;
  ok (map && set == DEVICE_PAGES,
      "and the store taking over has every page lost (%llu), none zeros",
      (unsigned long long) set);
  store_destroy (store);
  return tap_done ();
}
