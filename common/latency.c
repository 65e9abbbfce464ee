/* cswap: the latency histogram (latency.h).  Locking: none; atomics. */
#include "latency.h"

static unsigned
bucket_of (uint64_t ns)
{
  uint64_t us = ns / 1000;
  unsigned b = 0;

  while (us >= 2 && b < LATENCY_BUCKETS - 1) {
    us >>= 1;
    b++;
  }
  return b;
}

void
latency_record (struct latency_histogram *h, uint64_t ns)
{
  atomic_fetch_add_explicit (&h->bucket[bucket_of (ns)], 1,
                             memory_order_relaxed);
  atomic_fetch_add_explicit (&h->count, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&h->total_ns, ns, memory_order_relaxed);
}

/* The upper bound of bucket B in microseconds (the last one has none: its
 * lower bound stands for it).
 */
static double
bucket_upper_us (unsigned b)
{
  return b == LATENCY_BUCKETS - 1 ? (double) (1ull << b)
                                  : (double) (2ull << b);
}

void
latency_summarise (const struct latency_histogram *h, struct latency_summary *s)
{
  uint64_t counts[LATENCY_BUCKETS], total = 0;

  for (unsigned b = 0; b < LATENCY_BUCKETS; b++) {
    counts[b] = atomic_load_explicit (&h->bucket[b], memory_order_relaxed);
    total += counts[b];
  }
  *s = (struct latency_summary) { .count = total };
  if (total == 0)
    return;
  s->mean_us = atomic_load_explicit (&h->total_ns, memory_order_relaxed)
    / 1000.0 / atomic_load_explicit (&h->count, memory_order_relaxed);

  const struct { double share; double *out; } wanted[] = {
    { 0.50, &s->p50_us }, { 0.90, &s->p90_us }, { 0.99, &s->p99_us },
  };
  for (unsigned w = 0; w < sizeof wanted / sizeof wanted[0]; w++) {
    /* The smallest bucket with at least SHARE of the requests at or
     * below it.
     */
    uint64_t seen = 0, need = (uint64_t) (wanted[w].share * total);
    if (need == 0)
      need = 1;
    for (unsigned b = 0; b < LATENCY_BUCKETS; b++) {
      seen += counts[b];
      if (seen >= need) {
        *wanted[w].out = bucket_upper_us (b);
        break;
      }
    }
  }
}
