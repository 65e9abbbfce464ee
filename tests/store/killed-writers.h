/* cswap tests: a store written by threads of a child process that is
 * killed, and the model its parent keeps of what the store must hold
 * (test-persist.c, test-persist-backing.c).
 *
 * In the child, KW_WRITER_THREADS threads write and zero pages of the
 * store for ever; before and after each request a thread tells the
 * parent (a pipe), as the kernel knows which of its requests were
 * answered.  Thread T writes the pages in blocks of KW_MAX_PAGES_PER_WRITE
 * whose number is T modulo KW_WRITER_THREADS, so no two threads write
 * one page and each page's last answered request is known.  A request
 * the store refuses with ENOSPC (a full pool and file) is told as
 * refused: what its pages hold is then unknown, as it is to the kernel,
 * which never reads such a slot.
 *
 * The parent kills the child after a while, sends again what it began
 * and did not answer (ublk's REISSUE), and checks every page.
 */
#ifndef CSWAP_TEST_KILLED_WRITERS_H
#define CSWAP_TEST_KILLED_WRITERS_H

#include <stdbool.h>
#include <stdint.h>

#include "pagefile.h"
#include "store.h"

#define KW_WRITER_THREADS 2
#define KW_MAX_PAGES_PER_WRITE 4
#define KW_UNKNOWN UINT64_MAX

struct kw_report {
  uint8_t step, op, thread, pages;
  uint32_t first;
  uint64_t seed;                /* a write's first page's; +1 a page */
};

/* The parent's model: REFERENCE[P] is what page P must read as, 0 for
 * zeros, else the seed kw_page makes it from, KW_UNKNOWN after a refused
 * write.
 */
struct kw_model {
  const struct pagefile *corpus;
  unsigned pages;
  uint64_t *reference;
  struct kw_report pending[KW_WRITER_THREADS];
  bool has_pending[KW_WRITER_THREADS];
  uint64_t answered;
};

/* A test's start: CORPUS loaded (CSWAP_CORPUS; else the whole test is
 * skipped), *GENERATIONS cut to 3 under CSWAP_TEST_SCALE < 1, *DEVICE a
 * segment device number of the test's own (0x8…: clear of ublk's).
 * Returns the run's seed.
 */
extern uint64_t kw_setup (struct pagefile *corpus, unsigned *generations,
                          uint32_t *device);
/* PROBE, a store made to see whether this machine can make one: the
 * test is skipped where it cannot lock a segment (no CAP_IPC_LOCK),
 * bails out on any other failure.  Destroys it.
 */
extern void kw_probe (struct store *probe);

/* xorshift64*: a run repeats from its seed. */
extern uint64_t kw_next (uint64_t *state);
/* The page SEED makes: corpus pages mostly, some same-filled (zeros
 * too), some noise that does not compress.
 */
extern void kw_page (const struct pagefile *corpus, uint64_t seed,
                     unsigned char *page);

/* The child, once it has made or adopted STORE (PAGES long; NULL: it
 * could not): starts its background threads, the writer threads, which
 * tell REPORT_FD, from SEED, and ALSO (STORE its argument), and waits
 * for the kill.  Exits with status 2 if STORE is NULL or its threads do
 * not start.
 */
extern void kw_serve (struct store *store, unsigned pages,
                      const struct pagefile *corpus, int report_fd,
                      uint64_t seed, void *(*also) (void *store))
  __attribute__ ((noreturn));

/* The parent: forks CHILD (which must not return) with a pipe it tells,
 * reads its reports for about RUN_MS, kills it with SIGKILL and reads
 * the rest.  Returns its wait status.
 */
extern int kw_run (struct kw_model *model,
                   void (*child) (int report_fd, void *arg), void *arg,
                   unsigned run_ms);
/* Sends STORE again what the dead child began and did not answer. */
extern void kw_reissue (struct kw_model *model, struct store *store);
/* The pages of STORE that do not read as the model says (their number;
 * a few are named as TAP comments); *WRITTEN: those that should hold
 * something.
 */
extern uint64_t kw_wrong_pages (const struct kw_model *model,
                                struct store *store, uint64_t *written);

#endif /* CSWAP_TEST_KILLED_WRITERS_H */
