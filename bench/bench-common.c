/* cswap: helpers shared by the benchmarks. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

const char *
bench_load_pages (int argc, char **argv, struct pagefile *pf)
{
  const char *path = argc > 1 ? argv[1] : CSWAP_DEFAULT_CORPUS;

  if (argc > 2) {
    fprintf (stderr, "usage: %s [PAGEFILE]\n", argv[0]);
    exit (2);
  }
  if (pagefile_load (path, pf) == -1)
    exit (1);
  return path;
}

uint64_t
bench_process_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

void
bench_warm_pages (const struct pagefile *pf)
{
  volatile unsigned char sink = 0;

  for (size_t i = 0; i < pf->pages; i++)
    sink += pagefile_page (pf, i)[0];
  (void) sink;
}

uint64_t
bench_rss_bytes (void)
{
  unsigned long size, resident;
  FILE *f = fopen ("/proc/self/statm", "r");

  if (f == NULL)
    return 0;
  if (fscanf (f, "%lu %lu", &size, &resident) != 2)
    resident = 0;
  fclose (f);
  return (uint64_t) resident * sysconf (_SC_PAGESIZE);
}
