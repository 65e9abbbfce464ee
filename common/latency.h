/* cswap: a latency histogram that many threads record into at once.
 *
 * Buckets are powers of two of microseconds: bucket 0 counts durations
 * under 2 us, bucket b (1..LATENCY_BUCKETS-2) those in [2^b, 2^(b+1)) us,
 * and the last one everything from 2^(LATENCY_BUCKETS-1) us (about 4 s)
 * up.  Recording is three relaxed atomic adds and no lock, cheap enough
 * for every request on the data path.  A percentile is read back as the
 * upper bound of the bucket that holds it: within a factor of two, which
 * is what telling 40 us from 200 us or 2 ms needs.
 */
#ifndef CSWAP_LATENCY_H
#define CSWAP_LATENCY_H

#include <stdatomic.h>
#include <stdint.h>

#define LATENCY_BUCKETS 24

struct latency_histogram {
  atomic_uint_fast64_t bucket[LATENCY_BUCKETS];
  atomic_uint_fast64_t count;
  atomic_uint_fast64_t total_ns;
};

/* What the statistics show: a copy taken bucket by bucket (not one
 * instant, but each number exact).
 */
struct latency_summary {
  uint64_t count;
  double mean_us;
  double p50_us, p90_us, p99_us;        /* bucket upper bounds; 0 if empty */
};

extern void latency_record (struct latency_histogram *h, uint64_t ns);
extern void latency_summarise (const struct latency_histogram *h,
                               struct latency_summary *summary);

#endif /* CSWAP_LATENCY_H */
