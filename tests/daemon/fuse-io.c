/* cswap: random I/O through the cswap-fuse file, checked against a copy
 * in memory.
 *
 *   fuse-io FILE [THREADS [OPS_PER_THREAD]]
 *
 * 1. Each thread owns one slice of the file and does random writes, reads,
 *    fallocate(PUNCH_HOLE|KEEP_SIZE) and fallocate(ZERO_RANGE): page-aligned
 *    ones through an O_DIRECT descriptor, unaligned ones through a plain
 *    one, with data that is random, same-filled, zero or compressible, so
 *    every kind of stored page is made.  Every read is compared with the
 *    reference.
 * 2. All threads write interleaved unaligned slices of the same pages at
 *    once: a lost read-modify-write in the store would show.
 * 3. The whole file is read back and compared; then the end-of-file rules
 *    (short read, short write, EFBIG) and an unsupported fallocate mode.
 *
 * Locking: none needed.  Threads write disjoint byte ranges of the file
 * and of the reference, and the main thread reads only after joining them.
 * Set CSWAP_FUSE_IO_SEED to replay a run.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#define PAGE 4096
#define MAX_OP_BYTES (64 * 1024)
#define SHARED_PAGES 64
#define SHARED_PASSES 20

static const char *path;
static unsigned char *reference;
static uint64_t file_bytes;
static unsigned thread_count;
static unsigned ops_per_thread;
static uint64_t seed;

struct worker {
  pthread_t thread;
  unsigned index;
  uint64_t rng;
  uint64_t region_start, region_bytes;
  unsigned writes, reads, punches, zeroes;
  unsigned mismatches, errors;
  char first_problem[160];
};

static uint64_t
next_random (uint64_t *state)
{
  /* xorshift64* */
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545F4914F6CDD1DULL;
}

static uint64_t
random_below (uint64_t *state, uint64_t n)
{
  return next_random (state) % n;
}

__attribute__ ((format (printf, 2, 3)))
static void
problem (struct worker *w, const char *fmt, ...)
{
  va_list ap;

  if (w->first_problem[0])
    return;
  va_start (ap, fmt);
  vsnprintf (w->first_problem, sizeof w->first_problem, fmt, ap);
  va_end (ap);
}

/* Random, same-filled, zero or compressible (a few words repeated). */
static void
fill (uint64_t *rng, unsigned char *buf, size_t len)
{
  uint64_t value = next_random (rng);

  switch (random_below (rng, 4)) {
  case 0:
    for (size_t i = 0; i < len; i++)
      buf[i] = next_random (rng);
    break;
  case 1:
    for (size_t i = 0; i < len; i++)
      buf[i] = value >> (8 * (i % 8));
    break;
  case 2:
    memset (buf, 0, len);
    break;
  default:
    for (size_t i = 0; i < len; i++)
      buf[i] = "swap page compressed "[(i + value) % 21] ^ (i / 512);
    break;
  }
}

static int
open_or_die (int flags)
{
  int fd = open (path, O_RDWR | flags);

  if (fd == -1)
    tap_bail_out ("open %s%s: %m", path, flags & O_DIRECT ? " O_DIRECT" : "");
  return fd;
}

static void
random_op (struct worker *w, int direct_fd, int plain_fd, unsigned char *buf)
{
  bool aligned = random_below (&w->rng, 2);
  uint64_t offset, len;
  unsigned kind = random_below (&w->rng, 20);
  int fd = aligned ? direct_fd : plain_fd;
  ssize_t r;

  if (aligned) {
    len = (1 + random_below (&w->rng, MAX_OP_BYTES / PAGE)) * PAGE;
    offset = w->region_start
             + random_below (&w->rng, w->region_bytes / PAGE) * PAGE;
  }
  else {
    len = 1 + random_below (&w->rng, MAX_OP_BYTES + PAGE);
    offset = w->region_start + random_below (&w->rng, w->region_bytes);
  }
  if (len > w->region_start + w->region_bytes - offset)
    len = w->region_start + w->region_bytes - offset;

  if (kind < 8) {
    fill (&w->rng, buf, len);
    r = pwrite (fd, buf, len, offset);
    if (r != (ssize_t) len) {
      w->errors++;
      problem (w, "pwrite %llu@%llu: %zd (%m)", (unsigned long long) len,
               (unsigned long long) offset, r);
      return;
    }
    memcpy (reference + offset, buf, len);
    w->writes++;
  }
  else if (kind < 14) {
    r = pread (fd, buf, len, offset);
    if (r != (ssize_t) len) {
      w->errors++;
      problem (w, "pread %llu@%llu: %zd (%m)", (unsigned long long) len,
               (unsigned long long) offset, r);
      return;
    }
    if (memcmp (buf, reference + offset, len) != 0) {
      w->mismatches++;
      problem (w, "pread %llu@%llu: data differs from what was written",
               (unsigned long long) len, (unsigned long long) offset);
    }
    w->reads++;
  }
  else {
    bool punch = kind < 17;
    int mode = punch ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
                     : FALLOC_FL_ZERO_RANGE;

    if (fallocate (fd, mode, offset, len) == -1) {
      w->errors++;
      problem (w, "fallocate %s %llu@%llu: %m", punch ? "punch" : "zero",
               (unsigned long long) len, (unsigned long long) offset);
      return;
    }
    memset (reference + offset, 0, len);
    if (punch)
      w->punches++;
    else
      w->zeroes++;
  }
}

static void *
random_io (void *arg)
{
  struct worker *w = arg;
  int direct_fd = open_or_die (O_DIRECT), plain_fd = open_or_die (0);
  unsigned char *buf;

  if (posix_memalign ((void **) &buf, PAGE, MAX_OP_BYTES + PAGE) != 0)
    tap_bail_out ("posix_memalign failed");
  for (unsigned i = 0; i < ops_per_thread; i++)
    random_op (w, direct_fd, plain_fd, buf);
  free (buf);
  close (direct_fd);
  close (plain_fd);
  return NULL;
}

/* Thread T writes bytes [T * slice, (T + 1) * slice) of every 4096-byte
 * stretch starting 100 bytes into a page, so every page of the range is
 * written by two or more threads at the same time.
 */
static void *
shared_pages_io (void *arg)
{
  struct worker *w = arg;
  int fd = open_or_die (0);
  size_t slice = PAGE / thread_count;
  unsigned char buf[PAGE];

  for (unsigned pass = 0; pass < SHARED_PASSES; pass++)
    for (uint64_t page = 0; page + 1 < SHARED_PAGES; page++) {
      uint64_t offset = page * PAGE + 100 + w->index * slice;

      fill (&w->rng, buf, slice);
      if (pwrite (fd, buf, slice, offset) != (ssize_t) slice) {
        w->errors++;
        problem (w, "pwrite %zu@%llu: %m", slice,
                 (unsigned long long) offset);
        continue;
      }
      memcpy (reference + offset, buf, slice);
      w->writes++;
    }
  close (fd);
  return NULL;
}

static void
run_workers (struct worker *workers, void *(*body) (void *))
{
  for (unsigned t = 0; t < thread_count; t++)
    if (pthread_create (&workers[t].thread, NULL, body, &workers[t]) != 0)
      tap_bail_out ("pthread_create failed");
  for (unsigned t = 0; t < thread_count; t++)
    pthread_join (workers[t].thread, NULL);
}

/* Reads the whole file into BUF; returns false on a short read. */
static bool
read_whole_file (unsigned char *buf)
{
  int fd = open_or_die (O_DIRECT);
  bool complete = true;

  for (uint64_t off = 0; off < file_bytes; off += 1 << 20) {
    size_t len = file_bytes - off < (1 << 20) ? file_bytes - off : 1 << 20;

    if (pread (fd, buf + off, len, off) != (ssize_t) len) {
      diag ("pread %zu@%llu: %m", len, (unsigned long long) off);
      complete = false;
      break;
    }
  }
  close (fd);
  return complete;
}

static void
check_end_of_file (void)
{
  int fd = open_or_die (0);
  unsigned char buf[PAGE] = { 0 };
  ssize_t r;

  r = pread (fd, buf, PAGE, file_bytes - 100);
  ok (r == 100, "a read crossing the end is short (%zd of %d bytes)", r, PAGE);
  r = pread (fd, buf, PAGE, file_bytes);
  ok (r == 0, "a read at the end returns 0 bytes (%zd)", r);
  errno = 0;
  r = pwrite (fd, buf, 1, file_bytes);
  ok (r == -1 && errno == EFBIG, "a write at the end fails with EFBIG (%zd, %m)",
      r);
  r = pwrite (fd, buf, 20, file_bytes - 10);
  ok (r == 10, "a write crossing the end is short (%zd of 20 bytes)", r);
  if (r > 0)
    memcpy (reference + file_bytes - 10, buf, r);
  errno = 0;
  r = fallocate (fd, 0, 0, PAGE);
  ok (r == -1 && errno == EOPNOTSUPP,
      "fallocate without PUNCH_HOLE or ZERO_RANGE is refused (%m)");
  close (fd);
}

int
main (int argc, char *argv[])
{
  const char *seed_env = getenv ("CSWAP_FUSE_IO_SEED");
  struct worker *workers;
  unsigned char *readback;
  struct stat st;

  if (argc < 2 || argc > 4)
    tap_bail_out ("usage: fuse-io FILE [THREADS [OPS_PER_THREAD]]");
  path = argv[1];
  thread_count = argc > 2 ? strtoul (argv[2], NULL, 10) : 4;
  ops_per_thread = argc > 3 ? strtoul (argv[3], NULL, 10) : 3000;
  if (thread_count == 0 || thread_count > 64)
    tap_bail_out ("THREADS must be 1..64");
  seed = seed_env ? strtoull (seed_env, NULL, 0) : (uint64_t) time (NULL);
  diag ("seed %llu (set CSWAP_FUSE_IO_SEED to replay)",
        (unsigned long long) seed);

  if (stat (path, &st) == -1)
    tap_bail_out ("%s: %m", path);
  file_bytes = st.st_size;
  if (file_bytes < (uint64_t) thread_count * MAX_OP_BYTES * 4
      || file_bytes < SHARED_PAGES * PAGE)
    tap_bail_out ("%s: too small for %u threads", path, thread_count);
  reference = malloc (file_bytes);
  readback = malloc (file_bytes);
  workers = calloc (thread_count, sizeof *workers);
  if (!reference || !readback || !workers)
    tap_bail_out ("malloc: %m");
  if (!read_whole_file (reference))
    tap_bail_out ("cannot read %s", path);

  uint64_t region_bytes = file_bytes / thread_count / PAGE * PAGE;
  for (unsigned t = 0; t < thread_count; t++)
    workers[t] = (struct worker) {
      .index = t,
      .rng = (seed + 1) * 0x9E3779B97F4A7C15ULL + t,
      .region_start = t * region_bytes,
      .region_bytes = region_bytes,
    };

  run_workers (workers, random_io);
  for (unsigned t = 0; t < thread_count; t++) {
    struct worker *w = &workers[t];

    ok (w->errors == 0 && w->mismatches == 0,
        "thread %u: %u writes, %u reads, %u punches, %u zero ranges: "
        "%u errors, %u mismatches%s%s", t, w->writes, w->reads, w->punches,
        w->zeroes, w->errors, w->mismatches, w->first_problem[0] ? ": " : "",
        w->first_problem);
    w->writes = w->errors = 0;
    w->first_problem[0] = '\0';
  }

  run_workers (workers, shared_pages_io);
  unsigned shared_errors = 0;
  for (unsigned t = 0; t < thread_count; t++) {
    shared_errors += workers[t].errors;
    if (workers[t].first_problem[0])
      diag ("thread %u: %s", t, workers[t].first_problem);
  }
  ok (shared_errors == 0,
      "%u threads wrote interleaved slices of the same %d pages", thread_count,
      SHARED_PAGES);

  check_end_of_file ();

  bool complete = read_whole_file (readback);
  uint64_t first_difference = file_bytes;
  for (uint64_t i = 0; complete && i < file_bytes; i++)
    if (readback[i] != reference[i]) {
      first_difference = i;
      break;
    }
  ok (complete && first_difference == file_bytes,
      "the whole file reads back as written%s (first difference at byte %lld)",
      complete ? "" : ": short read",
      first_difference == file_bytes ? -1LL : (long long) first_difference);

  free (workers);
  free (readback);
  free (reference);
  return tap_done ();
}
