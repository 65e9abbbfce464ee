/* cswap: common/latency — the request latency histogram: bucket bounds,
 * percentiles read back within a factor of two, the mean exact, and no
 * record lost when threads record at once (suite threads: under TSan).
 */
#include <pthread.h>
#include <stdint.h>

#include "latency.h"
#include "tap.h"

static void
test_percentiles (void)
{
  struct latency_histogram h = { 0 };
  struct latency_summary s;

  latency_summarise (&h, &s);
  ok (s.count == 0 && s.p50_us == 0 && s.mean_us == 0,
      "an empty histogram reads as zeros");

  /* 90 requests of 40 us, 9 of 300 us, 1 of 5 ms. */
  for (int i = 0; i < 90; i++)
    latency_record (&h, 40000);
  for (int i = 0; i < 9; i++)
    latency_record (&h, 300000);
  latency_record (&h, 5000000);
  latency_summarise (&h, &s);
  ok (s.count == 100, "count %llu", (unsigned long long) s.count);
  ok (s.p50_us == 64 && s.p90_us == 64,
      "p50 and p90 of 40 us read as 64 us, the bucket's bound (%g, %g)",
      s.p50_us, s.p90_us);
  ok (s.p99_us == 512, "p99 of 300 us reads as 512 us (%g)", s.p99_us);
  ok (s.mean_us > 112.9 && s.mean_us < 113.1, "the mean is exact: %g us",
      s.mean_us);

  struct latency_histogram edges = { 0 };
  latency_record (&edges, 0);
  latency_record (&edges, 1999);
  latency_summarise (&edges, &s);
  ok (s.p99_us == 2, "under 2 us goes in the first bucket (%g)", s.p99_us);
  latency_record (&edges, UINT64_MAX / 2);
  latency_record (&edges, UINT64_MAX / 2);
  latency_summarise (&edges, &s);
  ok (s.p99_us == (double) (1ull << (LATENCY_BUCKETS - 1)),
      "hours go in the last bucket, read as its lower bound (%g)", s.p99_us);
}

enum { THREADS = 4, RECORDS = 100000 };

static struct latency_histogram shared;

static void *
record_many (void *arg)
{
  uint64_t ns = (uintptr_t) arg;

  for (int i = 0; i < RECORDS; i++)
    latency_record (&shared, ns + i % 1000);
  return NULL;
}

static void
test_threads (void)
{
  pthread_t threads[THREADS];
  struct latency_summary s;

  for (uintptr_t t = 0; t < THREADS; t++)
    pthread_create (&threads[t], NULL, record_many, (void *) (t * 50000));
  for (int t = 0; t < THREADS; t++)
    pthread_join (threads[t], NULL);
  latency_summarise (&shared, &s);
  ok (s.count == THREADS * RECORDS, "%d threads: %llu of %d records kept",
      THREADS, (unsigned long long) s.count, THREADS * RECORDS);
}

int
main (void)
{
  test_percentiles ();
  test_threads ();
  return tap_done ();
}
