/* cswap tests: a store written by threads of a child process that is
 * killed (see killed-writers.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "killed-writers.h"
#include "page.h"
#include "tap.h"

enum step { STEP_BEGIN, STEP_DONE, STEP_REFUSED };
enum op { OP_WRITE, OP_ZERO };

uint64_t
kw_setup (struct pagefile *corpus, unsigned *generations, uint32_t *device)
{
  const char *path = getenv ("CSWAP_CORPUS");
  const char *scale = getenv ("CSWAP_TEST_SCALE");

  if (path == NULL || pagefile_load (path, corpus) == -1)
    tap_skip_all ("no corpus (set CSWAP_CORPUS)");
  if (scale && atof (scale) < 1)
    *generations = 3;
  *device = 0x80000000u | (uint32_t) getpid ();
  return (uint64_t) time (NULL) ^ (uint64_t) getpid () << 32;
}

void
kw_probe (struct store *probe)
{
  if (probe == NULL && (errno == EPERM || errno == ENOMEM || errno == ENOSYS))
    tap_skip_all ("no locked System V segment here (needs CAP_IPC_LOCK)");
  if (probe == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  store_destroy (probe);
}

uint64_t
kw_next (uint64_t *state)
{
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

void
kw_page (const struct pagefile *corpus, uint64_t seed, unsigned char *page)
{
  uint64_t state = seed * 0x9e3779b97f4a7c15ull | 1;
  unsigned kind = kw_next (&state) % 8;

  if (kind == 0) {
    uint64_t value = kw_next (&state) % 2 ? 0 : kw_next (&state);
    for (size_t i = 0; i < CSWAP_PAGE_SIZE; i += 8)
      memcpy (page + i, &value, 8);
  }
  else if (kind == 1)
    for (size_t i = 0; i < CSWAP_PAGE_SIZE; i += 8) {
      uint64_t v = kw_next (&state);
      memcpy (page + i, &v, 8);
    }
  else
    memcpy (page, pagefile_page (corpus, kw_next (&state) % corpus->pages),
            CSWAP_PAGE_SIZE);
}

/* Writes or zeroes R's pages of STORE: 0 or -errno. */
static int
apply (const struct pagefile *corpus, struct store *store,
       const struct kw_report *r)
{
  unsigned char buf[KW_MAX_PAGES_PER_WRITE * CSWAP_PAGE_SIZE];
  uint64_t bytes = (uint64_t) r->pages * CSWAP_PAGE_SIZE;
  uint64_t offset = (uint64_t) r->first * CSWAP_PAGE_SIZE;

  if (r->op == OP_ZERO)
    return store_zero (store, bytes, offset);
  for (unsigned i = 0; i < r->pages; i++)
    kw_page (corpus, r->seed + i, buf + (size_t) i * CSWAP_PAGE_SIZE);
  return store_write (store, buf, bytes, offset);
}

/* ------------------------------------------------------- the child -- */

struct writer {
  struct store *store;
  const struct pagefile *corpus;
  unsigned pages;
  int report_fd;
  unsigned thread;
  uint64_t rng;
};

static void
tell (int fd, const struct kw_report *r)
{
  if (write (fd, r, sizeof *r) != sizeof *r)
    _exit (3);
}

static void *
writer_thread (void *arg)
{
  struct writer *w = arg;
  unsigned blocks = w->pages / KW_MAX_PAGES_PER_WRITE;

  for (;;) {
    unsigned block = kw_next (&w->rng) % (blocks / KW_WRITER_THREADS)
      * KW_WRITER_THREADS + w->thread;
    struct kw_report r = {
      .step = STEP_BEGIN, .op = kw_next (&w->rng) % 8 ? OP_WRITE : OP_ZERO,
      .thread = w->thread,
      .pages = 1 + kw_next (&w->rng) % KW_MAX_PAGES_PER_WRITE,
      .first = block * KW_MAX_PAGES_PER_WRITE, .seed = kw_next (&w->rng) | 1,
    };

    tell (w->report_fd, &r);
    int e = apply (w->corpus, w->store, &r);
    if (e && e != -ENOSPC)
      _exit (4);
    r.step = e ? STEP_REFUSED : STEP_DONE;
    tell (w->report_fd, &r);
  }
  return NULL;
}

void
kw_serve (struct store *store, unsigned pages, const struct pagefile *corpus,
          int report_fd, uint64_t seed, void *(*also) (void *store))
{
  static struct writer writers[KW_WRITER_THREADS];
  pthread_t thread;

  if (store == NULL || store_start_background (store))
    _exit (2);
  for (unsigned t = 0; t < KW_WRITER_THREADS; t++) {
    writers[t] = (struct writer) {
      .store = store, .corpus = corpus, .pages = pages,
      .report_fd = report_fd, .thread = t, .rng = seed + t,
    };
    pthread_create (&thread, NULL, writer_thread, &writers[t]);
  }
  pthread_create (&thread, NULL, also, store);
  for (;;)
    pause ();
}

/* ------------------------------------------------------ the parent -- */

static void
take_report (struct kw_model *m, const struct kw_report *r)
{
  if (r->step == STEP_BEGIN) {
    m->pending[r->thread] = *r;
    m->has_pending[r->thread] = true;
    return;
  }
  m->has_pending[r->thread] = false;
  m->answered++;
  for (unsigned i = 0; i < r->pages; i++)
    m->reference[r->first + i] = r->step == STEP_REFUSED ? KW_UNKNOWN
      : r->op == OP_WRITE ? r->seed + i : 0;
}

static uint64_t
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
kw_run (struct kw_model *m, void (*child) (int report_fd, void *arg),
        void *arg, unsigned run_ms)
{
  int fds[2];
  pid_t pid;
  struct kw_report r;
  int status;

  if (pipe (fds))
    tap_bail_out ("pipe: %m");
  pid = fork ();
  if (pid == 0) {
    close (fds[0]);
    child (fds[1], arg);
    _exit (5);
  }
  close (fds[1]);
  /* Read as it goes: a full pipe would stop the writers, and the kill
   * would find them waiting instead of working.
   */
  for (uint64_t end = now_ms () + run_ms; now_ms () < end;) {
    struct pollfd pfd = { .fd = fds[0], .events = POLLIN };

    if (poll (&pfd, 1, 10) == 1 && read (fds[0], &r, sizeof r) == sizeof r)
      take_report (m, &r);
  }
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  while (read (fds[0], &r, sizeof r) == sizeof r)
    take_report (m, &r);
  close (fds[0]);
  return status;
}

void
kw_reissue (struct kw_model *m, struct store *store)
{
  for (unsigned t = 0; t < KW_WRITER_THREADS; t++) {
    struct kw_report *r = &m->pending[t];

    if (!m->has_pending[t])
      continue;
    r->step = apply (m->corpus, store, r) ? STEP_REFUSED : STEP_DONE;
    take_report (m, r);
  }
}

uint64_t
kw_wrong_pages (const struct kw_model *m, struct store *store,
                uint64_t *written)
{
  unsigned char got[CSWAP_PAGE_SIZE], want[CSWAP_PAGE_SIZE];
  uint64_t wrong = 0;

  *written = 0;
  for (unsigned p = 0; p < m->pages; p++) {
    if (m->reference[p] == KW_UNKNOWN)
      continue;
    if (m->reference[p]) {
      kw_page (m->corpus, m->reference[p], want);
      (*written)++;
    }
    else
      memset (want, 0, sizeof want);
    int e = store_read (store, got, CSWAP_PAGE_SIZE,
                        (uint64_t) p * CSWAP_PAGE_SIZE);
    if (e != 0 || memcmp (got, want, CSWAP_PAGE_SIZE) != 0) {
      if (wrong < 5)
        diag ("page %u: %s (seed %#llx)", p, e ? strerror (-e)
              : "not as written", (unsigned long long) m->reference[p]);
      wrong++;
    }
  }
  return wrong;
}
