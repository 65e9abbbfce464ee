/* cswap: nbdkit's settings and the machine's that leave a local swap
 * device unsafe, warned about at start.
 *
 * The plugin keeps its own process out of the reclaim path it serves
 * (memory-safety.h: memory locked, I/O threads real-time and I/O
 * flushers, the OOM killer told to spare it), by itself.  Four more
 * settings are not the plugin's to make, and `cswap up` makes them
 * (scripts/cswap/daemon.sh, tune.sh): a user who runs nbdkit and
 * nbd-client by hand gets nbdkit's defaults and the kernel's.  In a
 * 512 MiB VM (Debian's 6.1 kernel, no cgroup, fill-check of 640 MiB,
 * tests/vm/guest-swap manual-nbd) the device set up that way hung: the
 * kernel reported nbd's request-timeout worker blocked for 120 s and
 * more and the workload had not finished after 480 s, where zram took
 * 60 s.  So the plugin says, before nbdkit serves, what is missing and
 * the command that fixes it; nbdkit-cswap-plugin(1) gives the commands
 * in its first example, which the VM test (vm-manual-nbd) runs as
 * written:
 *  - vm.min_free_kbytes: under whole-machine pressure the I/O threads
 *    store swap-outs with memory from below the min watermark, which a
 *    real-time task may take (a quarter of it on Linux 6.1); the
 *    kernel's default on a small machine leaves less than the swap-outs
 *    in flight.  A sysctl of the whole machine: the plugin does not
 *    change it behind the user's back (`cswap up` records and restores
 *    it).
 *  - nbdkit --threads: nbdkit's default is 16 threads a connection, each
 *    a locked stack and a request buffer, and each real-time once it
 *    serves: more than the CPUs serve nothing sooner.
 *  - nbdkit --tls=off: without it nbdkit offers TLS wherever it finds
 *    certificates, so its TLS libraries stay locked (about 4 MiB).
 *  - vm.page-cluster: a swap-in through nbdkit is a round trip whatever
 *    its length, so fewer, longer reads matter (doc/design.md, "Swap
 *    readahead: page-cluster 5").  In the VM above, with the three
 *    above set, the kernel's default 3 read back 31563 pages in 480 s and
 *    fill-check had not finished; `cswap up`, which sets 5 as well,
 *    finished in 404 s (two TCG guests sharing two host cores).
 * A server of exports (export=) serves other machines, whose swap is not
 * in its own reclaim path: the caller leaves it alone.  Under `cswap up` and
 * cswap.service the sysctls are cswap's own (set by `cswap tune` once the
 * device is up, after nbdkit starts, or kept as cswap.conf says), which
 * it tells the plugin with $CSWAP_SYSCTLS_BY_CSWAP.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbdkit-command-line.h"
#include "nbdkit-settings.h"

#define MIN_FREE_MAX_KIB 16384
#define THREADS_MIN 2
#define THREADS_MAX 16
#define NBDKIT_DEFAULT_THREADS 16
#define PAGE_CLUSTER_NEEDED 5

uint64_t
nbdkit_settings_min_free_kib (uint64_t mem_total_kib)
{
  uint64_t kib = mem_total_kib / 20;

  return kib > 0 && kib <= MIN_FREE_MAX_KIB ? kib : MIN_FREE_MAX_KIB;
}

unsigned
nbdkit_settings_threads (long cpus)
{
  if (cpus < THREADS_MIN)
    return THREADS_MIN;
  return cpus > THREADS_MAX ? THREADS_MAX : (unsigned) cpus;
}

/* The number after KEY at the start of a line of PATH, or -1. */
static long long
read_number (const char *path, const char *key)
{
  FILE *f = fopen (path, "re");
  char line[256];
  long long value = -1;

  if (f == NULL)
    return -1;
  while (fgets (line, sizeof line, f)) {
    long long n;
    char *end;

    if (strncmp (line, key, strlen (key)) != 0)
      continue;
    n = strtoll (line + strlen (key), &end, 10);
    if (end != line + strlen (key))
      value = n;
    break;
  }
  fclose (f);
  return value;
}

static const char *
env_or (const char *name, const char *fallback)
{
  const char *value = getenv (name);

  return value && *value ? value : fallback;
}

/* PATH: $CSWAP_PROC_SYS/vm/NAME, or /proc/sys/vm/NAME. */
static void
vm_sysctl_path (char *path, size_t size, const char *name)
{
  snprintf (path, size, "%s/vm/%s", env_or ("CSWAP_PROC_SYS", "/proc/sys"),
            name);
}

static void
warn_min_free (void)
{
  char path[4096];

  vm_sysctl_path (path, sizeof path, "min_free_kbytes");
  long long min_free_kib = read_number (path, "");
  long long mem_total_kib = read_number (env_or ("CSWAP_MEMINFO",
                                                 "/proc/meminfo"),
                                         "MemTotal:");
  if (min_free_kib < 0 || mem_total_kib <= 0)
    return;
  uint64_t needed_kib = nbdkit_settings_min_free_kib (mem_total_kib);
  if ((uint64_t) min_free_kib < needed_kib)
    fprintf (stderr, "cswap: warning: vm.min_free_kbytes is %lld, less than "
             "a swap device served to this machine needs under memory "
             "pressure, or the machine can hang; raise it (as cswap up "
             "does): sysctl -w vm.min_free_kbytes=%" PRIu64 "\n",
             min_free_kib, needed_kib);
}

static void
warn_page_cluster (void)
{
  char path[4096];

  vm_sysctl_path (path, sizeof path, "page-cluster");
  long long page_cluster = read_number (path, "");
  if (page_cluster >= 0 && page_cluster < PAGE_CLUSTER_NEEDED)
    fprintf (stderr, "cswap: warning: vm.page-cluster is %lld: every "
             "swap-in is a round trip through nbdkit, of %d pages at most, "
             "and under memory pressure the machine crawls; raise it (as "
             "cswap up does): sysctl -w vm.page-cluster=%d\n",
             page_cluster, 1 << page_cluster, PAGE_CLUSTER_NEEDED);
}

void
nbdkit_settings_warn (int argc, char *const *argv)
{
  unsigned threads = nbdkit_command_line_threads (argc, argv);
  unsigned needed = nbdkit_settings_threads (sysconf (_SC_NPROCESSORS_ONLN));

  if (threads == 0)
    threads = NBDKIT_DEFAULT_THREADS;
  if (threads > needed)
    fprintf (stderr, "cswap: warning: nbdkit serves with %u threads a "
             "connection, more than this machine's CPUs: each holds locked "
             "memory the machine is short of under pressure; run nbdkit "
             "--threads %u\n", threads, needed);
  if (!nbdkit_command_line_tls_off (argc, argv))
    fprintf (stderr, "cswap: warning: nbdkit may speak TLS, so its TLS "
             "libraries stay locked (about 4 MiB); a swap device served to "
             "this machine needs none: run nbdkit --tls=off\n");
  if (getenv ("CSWAP_SYSCTLS_BY_CSWAP"))
    return;
  warn_min_free ();
  warn_page_cluster ();
}
