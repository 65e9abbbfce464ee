/* cswap: memory locking, I/O-flusher threads, OOM score, core dumps (see
 * the header).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon-log.h"
#include "memory-safety.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57    /* Linux 5.6; older headers lack it */
#endif

/* What each I/O thread faults in of its stack before its first request:
 * the deepest the data path goes (lz4's state is 16 KiB on the stack) with
 * room to spare.  Under MCL_ONFAULT the pages then stay locked.
 */
#define IO_STACK_PREFAULT_BYTES (128 * 1024)

/* The I/O threads' real-time priority: the lowest, above every ordinary
 * task, below every other real-time one.
 */
#define IO_THREAD_RT_PRIORITY 1

static atomic_bool io_flusher_warned;
static atomic_bool realtime_warned;
static __thread bool io_thread_ready;
/* Set once by memory_safety_setup, before any I/O thread starts. */
static bool memory_locked;

static void
warn (const char *what, int err)
{
  /* strerrordesc_np: no locale lookup, so no libc lock that a fork could
   * catch held (nbdkit forks its --run child after .after_fork).
   */
  daemon_log ("cswap: warning: %s: %s\n", what, strerrordesc_np (err));
}

/* Writes TEXT to the file PATH (in /proc); -1 with errno set on failure. */
static int
write_text (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  ssize_t len = strlen (text);
  int r = 0;

  if (fd == -1 || write (fd, text, len) != len)
    r = -1;
  if (fd != -1) {
    int saved_errno = errno;
    close (fd);
    errno = saved_errno;
  }
  return r;
}

static int
set_oom_score_adj (int value)
{
  char text[16];

  snprintf (text, sizeof text, "%d", value);
  return write_text ("/proc/self/oom_score_adj", text);
}

/* Marks the calling thread PR_SET_IO_FLUSHER, warning once per process. */
static void
set_io_flusher (void)
{
  if (prctl (PR_SET_IO_FLUSHER, 1, 0, 0, 0) == -1
      && !atomic_exchange (&io_flusher_warned, true))
    warn ("prctl PR_SET_IO_FLUSHER (needs CAP_SYS_RESOURCE; under memory "
          "pressure an I/O thread may wait on reclaim)", errno);
}

/* How much of a mapped file stays locked. */
enum lock_extent {
  LOCK_WHOLE,                   /* every page, read in now */
  LOCK_TOUCHED,                 /* MCL_ONFAULT: the pages touched */
  LOCK_FILE_PAGES_NONE,         /* none of its file pages: the kernel may
                                   reclaim them; its anonymous pages stay
                                   locked (lock_mapped_files) */
};

/* Libraries mapped but never called once the daemon serves: libgcrypt,
 * its libgpg-error, liblzma and libcap are libsystemd's, for journal
 * sealing and compression and for capabilities, none of which sd_notify
 * uses; libselinux and its libpcre2 are nbdkit's, for --selinux-label on
 * its sockets, at start; libcrypto seals the backing file's records;
 * GnuTLS and the libraries only it uses serve nbdkit's TLS.  Even the
 * pages of their files that loading touched (relocation tables, symbol
 * tables) were locked by mlockall's MCL_CURRENT, and are unlocked, so
 * that reclaim can take them (doc/design.md, "The smallest machine",
 * where 2 MiB decide whether a 160 MiB machine finishes).  Not the pages
 * the dynamic linker wrote, though (lock_mapped_files).
 */
static bool
library_never_called (const char *path, const struct io_path *io_path)
{
  static const char *const unused[] = {
    "/libgcrypt.so", "/libgpg-error.so", "/liblzma.so", "/libcap.so",
    "/libselinux.so", "/libpcre2-8.so",
  };
  static const char *const tls_only[] = {
    "/libgnutls.so", "/libnettle.so", "/libhogweed.so", "/libgmp.so",
    "/libp11-kit.so", "/libffi.so", "/libtasn1.so", "/libidn2.so",
    "/libunistring.so",
  };

  for (size_t i = 0; i < sizeof unused / sizeof unused[0]; i++)
    if (strstr (path, unused[i]))
      return true;
  if (!io_path->sealing && strstr (path, "/libcrypto.so"))
    return true;
  if (!io_path->tls)
    for (size_t i = 0; i < sizeof tls_only / sizeof tls_only[0]; i++)
      if (strstr (path, tls_only[i]))
        return true;
  return false;
}

/* How much of the file at PATH to keep locked.  Every file is locked
 * whole, its text, its libraries and their data, but for the libraries
 * above and libsystemd: MCL_ONFAULT locks only the pages touched so far,
 * and code first run under pressure (an error path, compaction,
 * writeback) would then be read in from the root file system exactly
 * when memory is shortest, by a thread the kernel is waiting on.
 * libsystemd's sd_notify runs only in the notify thread, never on the I/O
 * path, and its first call (READY=1) touches what later calls run: its
 * 0.8 MiB are left to MCL_ONFAULT.
 */
static enum lock_extent
file_lock_extent (const char *path, const struct io_path *io_path)
{
  /* The store's System V segment (store/store-segment.h): SHM_LOCK keeps
   * its pages in memory, and locking it whole would fault in all of its
   * address space, gigabytes reserved for the pool.
   */
  if (strncmp (path, "/SYSV", 5) == 0)
    return LOCK_TOUCHED;
  if (library_never_called (path, io_path))
    return LOCK_FILE_PAGES_NONE;
  if (strstr (path, "/libsystemd.so"))
    return LOCK_TOUCHED;
  return LOCK_WHOLE;
}

/* Locks every file the process has mapped as file_lock_extent says.
 * Mappings without access (a library's guard gaps) are left alone.
 *
 * A library left unlocked keeps its anonymous pages locked all the same:
 * the pages of its data segment that the dynamic linker relocated, its
 * GOT and its .dynamic among them (copies of the file's pages now, which
 * only swap can take), and any page of a writable mapping.  ld.so reads
 * every loaded object's .dynamic on every symbol lookup (do_lookup_x:
 * the DT_SYMTAB entry, before it knows whether the object has the
 * symbol), and a lookup comes with any lazy binding (liblz4, libc's own
 * calls to calloc and realloc) or dlsym, in any thread.  Unlocked, those
 * pages went to swap under pressure, the swap this daemon serves: a
 * ublk queue thread binding a symbol faulted on libcrypto's .dynamic
 * and waited for a swap-in that only it could serve, for good
 * (doc/design.md, "ublk").  File pages come back from the file system.
 * So only a mapping that is not writable and holds no anonymous page
 * (its text, its read-only data and symbol tables) is unlocked; what
 * the test tests/daemon/test-locked-libraries.sh checks.
 */
static void
lock_mapped_files (const struct io_path *io_path)
{
  FILE *smaps = fopen ("/proc/self/smaps", "re");
  char line[512];
  uintptr_t start = 0, end = 0;
  enum lock_extent extent = LOCK_TOUCHED;     /* as mlockall left it */
  bool writable = false;
  unsigned long anonymous_kib = 0;

  if (smaps == NULL) {
    warn ("/proc/self/smaps", errno);
    return;
  }
  while (fgets (line, sizeof line, smaps)) {
    uintptr_t first, past;
    char perms[5];
    int path_at = 0, r = 0;

    /* A mapping's first line; then its fields, VmFlags: last. */
    if (sscanf (line, "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %*s %n",
                &first, &past, perms, &path_at) == 3) {
      start = first;
      end = past;
      writable = perms[1] == 'w';
      anonymous_kib = 0;
      extent = path_at == 0 || line[path_at] != '/'
               || strcmp (perms, "---p") == 0
               ? LOCK_TOUCHED : file_lock_extent (line + path_at, io_path);
      continue;
    }
    if (sscanf (line, "Anonymous: %lu kB", &anonymous_kib) == 1
        || strncmp (line, "VmFlags:", 8) != 0)
      continue;
    switch (extent) {
    case LOCK_WHOLE:
      r = mlock ((void *) start, end - start);
      break;
    case LOCK_TOUCHED:
      break;
    case LOCK_FILE_PAGES_NONE:
      if (!writable && anonymous_kib == 0)
        r = munlock ((void *) start, end - start);
      break;
    }
    if (r == -1) {
      warn ("mlock or munlock of a mapped file", errno);
      break;
    }
  }
  fclose (smaps);
}

int
memory_safety_setup (const struct io_path *io_path)
{
  if (set_oom_score_adj (-1000) == -1)
    warn ("oom_score_adj -1000 (needs CAP_SYS_RESOURCE; the OOM killer "
          "may pick this daemon)", errno);
  /* Every thread of the daemon, not only those serving requests: the
   * threads share one address space, and a thread that reclaims with I/O
   * waits for this very device while holding the address-space lock
   * (a page fault takes it), so a thread waiting to map or unmap
   * anything, and every fault behind it, waits too.  Threads inherit
   * the flag, so set here, before the daemon starts any, it covers them
   * all, nbdkit's too.
   */
  set_io_flusher ();
  /* malloc on the request path (nbdkit's request buffers, libfuse's
   * requests) keeps reusing its heap: no mmap and munmap per buffer, no
   * trimming of freed memory back to the kernel, either of which takes
   * the address-space lock for writing and faults in fresh pages.
   */
  mallopt (M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt (M_TRIM_THRESHOLD, 64 * 1024 * 1024);
  mallopt (M_TOP_PAD, 4 * 1024 * 1024);  /* and grows it seldom */
  if (mlockall (MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == -1) {
    int saved_errno = errno;
    warn ("mlockall (raise LimitMEMLOCK/ulimit -l, or run as root)",
          saved_errno);
    errno = saved_errno;
    return -1;
  }
  lock_mapped_files (io_path);
  memory_locked = true;
  return 0;
}

void
memory_safety_forbid_core_dumps (void)
{
  static const struct rlimit no_core = { 0, 0 };

  /* First, while /proc/self is still this process's own: once it is not
   * dumpable, its files are root's, and only root could write them.
   */
  if (write_text ("/proc/self/coredump_filter", "0") == -1)
    warn ("coredump_filter 0 (a dump helper that ignores RLIMIT_CORE "
          "would be given the daemon's memory)", errno);
  if (setrlimit (RLIMIT_CORE, &no_core) == -1)
    warn ("RLIMIT_CORE 0", errno);
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
    warn ("prctl PR_SET_DUMPABLE 0", errno);
}

/* Makes the calling thread SCHED_FIFO.  Not for the speed: the page
 * allocator lets a real-time task take memory below the min watermark
 * (a quarter of it on Linux 6.1, half from 6.3), where every ordinary
 * allocation, the swapping program's and this daemon's own included,
 * waits for reclaim.  Reclaim there waits for swap-outs to finish, and
 * they finish only once this thread has stored them: in a 384 MiB VM
 * with no cgroup both front ends hung at that point with 3,600 pages in
 * flight, every I/O thread in direct reclaim, until their threads ran
 * real-time (doc/design.md, "Staying alive under memory pressure").  A
 * thread serves requests the kernel is waiting for, so the priority
 * takes no time from anything that is not waiting on it already.
 */
static void
set_realtime (void)
{
  struct sched_param param = { .sched_priority = IO_THREAD_RT_PRIORITY };
  int err = pthread_setschedparam (pthread_self (), SCHED_FIFO, &param);

  if (err && !atomic_exchange (&realtime_warned, true))
    warn ("SCHED_FIFO for the I/O threads (needs CAP_SYS_NICE; under "
          "whole-machine memory pressure they may wait for memory like "
          "any task)", err);
}

/* Faults in the stack below the caller's frame; noinline and the
 * volatile writes keep the compiler from shrinking or dropping it.
 */
static __attribute__ ((noinline)) void
prefault_stack (void)
{
  volatile char depth[IO_STACK_PREFAULT_BYTES];

  for (size_t i = 0; i < sizeof depth; i += 4096)
    depth[i] = 0;
  depth[sizeof depth - 1] = 0;
}

void
memory_safety_mark_io_thread (void)
{
  if (io_thread_ready)
    return;
  io_thread_ready = true;
  set_io_flusher ();
  prefault_stack ();
  if (memory_locked)
    set_realtime ();
}
