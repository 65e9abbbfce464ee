/* cswap: what every benchmark shares.
 *
 * Conventions (README "Benchmarks"): a benchmark takes a page file as its
 * only positional argument, raw 4 KiB pages or the same compressed with
 * zstd, defaulting to the corpus; it prints one JSON object per line with a
 * "bench" field naming what it measured.
 */
#ifndef CSWAP_BENCH_H
#define CSWAP_BENCH_H

#include <stdint.h>

#include "monotonic.h"
#include "pagefile.h"

/* Loads argv[1], or the corpus when there is none; exits with a message
 * on failure.  Returns the path loaded.
 */
extern const char *bench_load_pages (int argc, char **argv, struct pagefile *pf);


/* CPU time of the whole process (every thread), in nanoseconds. */
extern uint64_t bench_process_cpu_ns (void);

/* Reads one byte of every page of PF, so that a timed pass that reads
 * them first does not pay for mapping them.  Not a cache warm-up (a page
 * file is larger than the cache): on a virtual machine with shadow page
 * tables the first access of each page after the address space changed
 * (a realloc that moves the pages, a large free) traps to the hypervisor,
 * 4-6 us a page here: a raw codec pass, the best of several, does not pay
 * it, and neither does a daemon storing from its warm request buffer.
 */
extern void bench_warm_pages (const struct pagefile *pf);

/* MB/s (10^6 bytes per second) for BYTES moved in NS nanoseconds. */
static inline double
bench_mbps (uint64_t bytes, uint64_t ns)
{
  return ns ? (double) bytes * 1e3 / (double) ns : 0.0;
}

/* Resident set size of this process, in bytes (from /proc/self/statm). */
extern uint64_t bench_rss_bytes (void);

#endif /* CSWAP_BENCH_H */
