/* cswap: fault injection between the tier and the kernel (see io-fault.h);
 * linked only into test programs (tier_faults_dep), where a constructor
 * installs it as the tier's I/O layer (io-ops.h).
 *
 * The faulty table wraps the plain one.  Writes are struck in the queue,
 * just before io_uring_enter: the entries io_uring_get_sqe handed out and
 * no submission has yet taken are [sq.sqe_head, sq.sqe_tail) of liburing's
 * own ring (no SQPOLL), so a struck write is rewritten there and then
 * really submitted.  A short submit hides the tail of that range from
 * io_uring_submit, then puts it back: the kernel takes the head, and the
 * rest stays queued as after a real short submit.
 *
 * Threads: the percentages are set before the tier is used and only
 * read after; the random state is per thread; the counts are relaxed
 * atomics.  No lock.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io-fault.h"
#include "tier.h"
#include "xorshift.h"

static const char *const kind_name[IO_FAULT_KINDS] = {
  [IO_FAULT_EIO] = "eio",
  [IO_FAULT_WRITE_FAIL] = "write-fail",
  [IO_FAULT_SHORT_WRITE] = "short-write",
  [IO_FAULT_SHORT_SUBMIT] = "short-submit",
  [IO_FAULT_EAGAIN] = "eagain",
  [IO_FAULT_EINTR] = "eintr",
  [IO_FAULT_NULL_SQE] = "null-sqe",
  [IO_FAULT_READ_EINTR] = "read-eintr",
  [IO_FAULT_READ_SLOW] = "read-slow",
};

#define SHORTEST_WRITE_BYTES 512u

struct io_fault {
  unsigned percent[IO_FAULT_KINDS];
};

static atomic_uint_fast64_t injected[IO_FAULT_KINDS];

/* Whether KIND strikes this call; counted when it does. */
static bool
strikes (const struct io_fault *f, enum io_fault_kind kind)
{
  if (f->percent[kind] == 0 || xorshift_next () % 100 >= f->percent[kind])
    return false;
  atomic_fetch_add_explicit (&injected[kind], 1, memory_order_relaxed);
  return true;
}

static struct io_uring_sqe *
queued_sqe (struct io_uring *ring, unsigned n)
{
  return &ring->sq.sqes[(ring->sq.sqe_head + n) & ring->sq.ring_mask];
}

static void
fail_write (struct io_uring_sqe *sqe)
{
  sqe->fd = -1;
}

static void
shorten_write (struct io_uring_sqe *sqe)
{
  sqe->len = sqe->len > TIER_BLOCK_BYTES ? sqe->len - TIER_BLOCK_BYTES
                                          : SHORTEST_WRITE_BYTES;
}

static int
fault_queue_init (void *ctx, unsigned entries, struct io_uring *ring)
{
  (void) ctx;
  return tier_io_plain.queue_init (NULL, entries, ring);
}

static void
fault_queue_exit (void *ctx, struct io_uring *ring)
{
  (void) ctx;
  tier_io_plain.queue_exit (NULL, ring);
}

static struct io_uring_sqe *
fault_get_sqe (void *ctx, struct io_uring *ring)
{
  if (strikes (ctx, IO_FAULT_NULL_SQE))
    return NULL;
  return tier_io_plain.get_sqe (NULL, ring);
}

static int
fault_submit_and_wait (void *ctx, struct io_uring *ring, unsigned wait_nr)
{
  struct io_fault *f = ctx;
  unsigned queued = ring->sq.sqe_tail - ring->sq.sqe_head;

  if (strikes (f, IO_FAULT_EAGAIN))
    return -EAGAIN;
  if (strikes (f, IO_FAULT_EINTR))
    return -EINTR;
  if (queued > 0) {
    if (strikes (f, IO_FAULT_EIO))
      for (unsigned n = 0; n < queued; n++)
        fail_write (queued_sqe (ring, n));
    if (strikes (f, IO_FAULT_WRITE_FAIL))
      fail_write (queued_sqe (ring, xorshift_next () % queued));
    if (strikes (f, IO_FAULT_SHORT_WRITE))
      shorten_write (queued_sqe (ring, xorshift_next () % queued));
    if (strikes (f, IO_FAULT_SHORT_SUBMIT)) {
      unsigned tail = ring->sq.sqe_tail;
      ring->sq.sqe_tail = ring->sq.sqe_head + xorshift_next () % queued;
      int r = io_uring_submit (ring);
      ring->sq.sqe_tail = tail;
      return r;
    }
  }
  return tier_io_plain.submit_and_wait (NULL, ring, wait_nr);
}

static int
fault_wait_cqe (void *ctx, struct io_uring *ring, struct io_uring_cqe **cqe)
{
  if (strikes (ctx, IO_FAULT_EINTR))
    return -EINTR;
  return tier_io_plain.wait_cqe (NULL, ring, cqe);
}

static ssize_t
fault_pread (void *ctx, int fd, void *buf, size_t count, off_t offset)
{
  if (strikes (ctx, IO_FAULT_READ_EINTR)) {
    errno = EINTR;
    return -1;
  }
  ssize_t n = tier_io_plain.pread (NULL, fd, buf, count, offset);
  if (strikes (ctx, IO_FAULT_READ_SLOW)) {
    int saved_errno = errno;
    nanosleep (&(struct timespec) { .tv_nsec = IO_FAULT_SLOW_READ_MS * 1000000l },
               NULL);
    errno = saved_errno;
  }
  return n;
}

static const struct tier_io_ops faulty = {
  .queue_init = fault_queue_init,
  .queue_exit = fault_queue_exit,
  .get_sqe = fault_get_sqe,
  .submit_and_wait = fault_submit_and_wait,
  .wait_cqe = fault_wait_cqe,
  .pread = fault_pread,
};

/* Parses SPEC into F.  Returns false if any of it is not KIND:PERCENT. */
static bool
parse_spec (const char *spec, struct io_fault *f)
{
  char copy[256], *save = NULL;

  if (strlen (spec) >= sizeof copy)
    return false;
  strcpy (copy, spec);
  for (char *item = strtok_r (copy, ",", &save); item;
       item = strtok_r (NULL, ",", &save)) {
    char *colon = strchr (item, ':'), *end;
    enum io_fault_kind kind = 0;
    if (colon == NULL)
      return false;
    *colon = '\0';
    while (kind < IO_FAULT_KINDS && strcmp (item, kind_name[kind]) != 0)
      kind++;
    unsigned long percent = strtoul (colon + 1, &end, 10);
    if (kind == IO_FAULT_KINDS || end == colon + 1 || *end || percent > 100)
      return false;
    f->percent[kind] = percent;
  }
  return true;
}

/* The layer's open: the table and state for a tier being opened, from
 * CSWAP_TIER_FAULT as it is then.  A malformed variable is reported on
 * stderr and injects nothing.
 */
static const struct tier_io_ops *
faults_from_env (void **ctx)
{
  const char *spec = getenv ("CSWAP_TIER_FAULT");
  struct io_fault *f;

  *ctx = NULL;
  if (spec == NULL || *spec == '\0')
    return &tier_io_plain;
  f = calloc (1, sizeof *f);
  if (f == NULL || !parse_spec (spec, f)) {
    fprintf (stderr, "cswap: CSWAP_TIER_FAULT=%s: not KIND:PERCENT[,...] "
             "(or out of memory): no faults injected\n", spec);
    free (f);
    return &tier_io_plain;
  }
  *ctx = f;
  return &faulty;
}

static void
faults_free (void *ctx)
{
  free (ctx);
}

static const struct tier_io_layer fault_layer = {
  .open = faults_from_env,
  .close = faults_free,
};

/* Linking this file is what turns the layer on: before main(), so before
 * any tier is opened.
 */
__attribute__ ((constructor)) static void
install_fault_layer (void)
{
  tier_io_set_layer (&fault_layer);
}

void
io_fault_counts (uint64_t counts[IO_FAULT_KINDS])
{
  for (unsigned k = 0; k < IO_FAULT_KINDS; k++)
    counts[k] = atomic_load_explicit (&injected[k], memory_order_relaxed);
}
