/* cswap: keeping the daemon out of the reclaim path it serves, and its
 * memory out of core dumps.
 *
 * A swap device served from userspace is in the kernel's reclaim path:
 * if serving a swap-out needs memory that only a swap-out can free, the
 * machine hangs.  So the daemon
 *  - locks its memory (mlockall with MCL_ONFAULT: only what it touches is
 *    resident, unlike nbdkit --swap, which would fault in all of nbdkit's
 *    static buffers and thread stacks), so it is never swapped out itself;
 *    and locks every mapped file whole (text and libraries), so that no
 *    page of its code has to be read in under pressure;
 *  - marks every one of its threads PR_SET_IO_FLUSHER, which makes the
 *    kernel allocate for it without recursing into I/O: the control
 *    plane too, since all threads share one address-space lock, and one
 *    thread waiting on reclaim while holding it stalls the rest;
 *  - keeps malloc from mapping and unmapping memory on the request path,
 *    and faults in each I/O thread's stack before its first request;
 *  - runs each I/O thread SCHED_FIFO, which lets it take memory below
 *    the min watermark, where every ordinary task waits for reclaim, and
 *    so for this daemon;
 *  - asks the OOM killer to spare it (oom_score_adj -1000).
 * The flusher mark and the OOM score need CAP_SYS_RESOURCE, the priority
 * CAP_SYS_NICE; without it cswap warns once and
 * goes on: a daemon that refuses to start helps nobody.
 *
 * The daemon's memory holds every page swapped to it, and the backing
 * file's key: a core dump would write them to disk, where they outlive
 * the process (systemd-coredump keeps dumps for days).  So unless
 * core-dump=yes the daemon makes none, three times over, because each
 * stops a different path: RLIMIT_CORE 0 (a dump to a file, and
 * systemd-coredump, which honours the limit); coredump_filter 0 (no
 * memory in a dump at all, for a pipe helper that ignores the limit);
 * and PR_SET_DUMPABLE 0 (no dump at all unless fs.suid_dumpable says
 * otherwise; ptrace and /proc/PID/mem then need CAP_SYS_PTRACE, and the
 * /proc/PID files become root's).  The pool and the key's page are
 * MADV_DONTDUMP besides (allocator/pool.c, tier/seal.c), even with
 * core-dump=yes.
 */
#ifndef CSWAP_MEMORY_SAFETY_H
#define CSWAP_MEMORY_SAFETY_H

#include <stdbool.h>

/* What the daemon will run under pressure, beyond its own code and libc:
 * which libraries must be locked whole.
 */
struct io_path {
  bool sealing;                 /* backing records sealed: libcrypto */
  bool tls;                     /* nbdkit may speak TLS: GnuTLS and the
                                   libraries only it uses */
};

/* Marks the calling thread an I/O flusher, locks memory and sets the OOM
 * score, warning on stderr ("cswap: warning: …") about what it could not
 * do.  Every mapped file is locked whole but libsystemd (what it touched)
 * and the libraries never called once serving, which IO_PATH helps name
 * (their file pages not locked; every anonymous page, theirs too, stays
 * locked, since only swap could take it).  Call it after any fork (memory locks are not inherited
 * by a child) and before starting any thread (which inherits the mark).
 * Returns 0, or -1 when mlockall itself failed (errno set; the caller
 * decides whether to go on).
 */
extern int memory_safety_setup (const struct io_path *io_path);

/* Lets no core dump be written of this process, warning on stderr about
 * what it could not do.  Call it before the store is made (the key is
 * drawn then); a child of fork() inherits all three settings, and a
 * program it executes the limit and the filter.
 */
extern void memory_safety_forbid_core_dumps (void);

/* Readies the calling thread for the I/O path, once per thread: marks it
 * an I/O flusher (threads started after memory_safety_setup inherit the
 * mark already), faults in its stack and, once memory_safety_setup has
 * run, makes it SCHED_FIFO.  Call it at the top of every
 * request handler (nbdkit and libfuse make their worker threads
 * themselves).  Cheap after the first call in a thread.
 */
extern void memory_safety_mark_io_thread (void);

#endif /* CSWAP_MEMORY_SAFETY_H */
