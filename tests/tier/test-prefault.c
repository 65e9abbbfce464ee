/* cswap: the memory the tier's threads fill is made with the store, not
 * faulted in when first filled (common/prefault.h).
 *
 * Under mlockall (MCL_ONFAULT) a first touch is a page fault that needs a
 * new page; under memory pressure that is direct reclaim, which waits on
 * swap-outs the daemon itself must store.  A 256 MiB VM hung that way
 * with the writeback thread sealing its first batch into a buffer never
 * touched (issue 63).  So, counted in this thread's minor faults
 * (getrusage RUSAGE_THREAD), with its stack faulted in first:
 *   - the first writeback of a store, 64 pages sealed into its batch and
 *     the cleaner's: no more faults than a few pages of the allocator's
 *     and libcrypto's own (before: one per 4 KiB of the batch filled);
 *   - with writeback-batch raised to 256 pages, the next writeback too
 *     (before: 94 faults).
 * Not counted here: the read-ahead buffers, which the kernel fills
 * (pread, O_DIRECT), and a page the kernel faults in for a system call is
 * not one of the thread's faults.
 * Backing files go under $CSWAP_TIER_DIR or /var/tmp (O_DIRECT).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backed-store.h"
#include "page.h"
#include "pagefile.h"
#include "store.h"
#include "tap.h"

#define DEVICE_PAGES 2048u
#define BACKING_BYTES (16u << 20)
/* What a first writeback may fault in besides its buffers: the
 * allocator's and libcrypto's own small allocations (0 here).  The
 * buffer's share before they were made with the store: 27 faults for 64
 * sealed pages of this corpus.
 */
#define FEW_FAULTS 8

static struct pagefile corpus;
static char backing_path[256];

static long
faults_so_far (void)
{
  struct rusage u;

  getrusage (RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

/* This thread's stack, as deep as the store goes, faulted in now. */
static void __attribute__ ((noinline))
fault_in_stack (void)
{
  volatile unsigned char depth[256 * 1024];

  for (size_t i = 0; i < sizeof depth; i += 4096)
    depth[i] = 0;
}

static void
write_pages (struct store *store, unsigned first, unsigned pages)
{
  for (unsigned p = first; p < first + pages; p++)
    if (store_write (store, pagefile_page (&corpus, p % corpus.pages),
                     CSWAP_PAGE_SIZE, (uint64_t) p * CSWAP_PAGE_SIZE))
      tap_bail_out ("store_write of page %u failed", p);
}

static long
faults_of_writeback (struct store *store, uint64_t pages,
                     struct store_writeback_result *done)
{
  long before = faults_so_far ();

  store_writeback (store, 0, pages, true, done);
  return faults_so_far () - before;
}

int
main (void)
{
  struct store_writeback_result done;

  /* A sanitizer faults in shadow memory of its own for every new page
   * (ASan: 3 and 12 faults where the plain build has 0): the count
   * means nothing there.
   */
  const char *sanitize = getenv ("CSWAP_SANITIZE");
  if (sanitize && *sanitize && strcmp (sanitize, "none") != 0)
    tap_skip_all ("under a sanitizer, which faults in shadow memory of its own");
  /* Every buffer of 64 KiB or more a fresh mapping, never memory some
   * earlier allocation touched (which would hide a missing prefault).
   */
  mallopt (M_MMAP_THRESHOLD, 64 * 1024);
  backed_store_setup (&corpus, backing_path, sizeof backing_path,
                      "cswap-test-prefault");
  struct store_config config = {
    .size_bytes = (uint64_t) DEVICE_PAGES * CSWAP_PAGE_SIZE,
    .codec = { CODEC_LZ4, 0 },
    .backing_path = backing_path,
    .backing_size_bytes = BACKING_BYTES,
  };
  struct store *store = backed_store_create (&config);

  write_pages (store, 0, 1024);
  fault_in_stack ();
  long faults = faults_of_writeback (store, 64, &done);
  ok (done.pages_written == 64 && faults <= FEW_FAULTS,
      "the first writeback, 64 pages sealed: %ld page faults (at most %d)",
      faults, FEW_FAULTS);

  if (store_set_writeback_batch (store, 256))
    tap_bail_out ("writeback-batch 256 refused");
  faults = faults_of_writeback (store, 256, &done);
  ok (done.pages_written == 256 && faults <= FEW_FAULTS,
      "with writeback-batch raised to 256, a batch of 256: %ld page faults "
      "(at most %d)", faults, FEW_FAULTS);

  store_destroy (store);
  unlink (backing_path);
  pagefile_free (&corpus);
  return tap_done ();
}
