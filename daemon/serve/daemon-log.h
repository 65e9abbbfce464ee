/* cswap: the daemon's messages while it serves, written by a thread of
 * their own so that no thread serving I/O ever waits on stderr.
 *
 * The daemon's stderr is a file (`cswap up` sends it to one on the tmpfs
 * under /run; systemd to the journal's socket), and a write(2) to it can
 * wait for memory: a page of the log file swapped out to the very device
 * the writing thread serves needs a swap-in through that thread's queue,
 * and the machine hangs (issue 62, reproduced with cswap-ublk in the 6.12
 * VM: a queue thread in shmem_swapin_folio, writing the "device full"
 * warning).  So, between daemon_log_start and daemon_log_stop:
 *
 *   any thread  daemon_log: formats the line on its own stack (bounded:
 *               MESSAGE_RING_TEXT_BYTES, a longer one is cut) and pushes
 *               it into a ring (common/message-ring.h) made and locked in
 *               memory at start, then pokes an eventfd; neither waits,
 *               nor allocates; a full ring drops the line and counts it
 *   the drain   one thread, which may block: writes each line to fd 2
 *               with write(2), in the ring's order (one thread's lines in
 *               the order it said them), and after them
 *               "PROGRAM: N messages dropped (the message ring was full)"
 *
 * Before daemon_log_start (start-up) and after daemon_log_stop (the
 * serving threads are gone), daemon_log writes to stderr at once, as
 * fprintf did.  The text is the caller's, newline included, unchanged:
 * `cswap up`'s log and the unit's journal read the same lines as before.
 *
 * The drain uses write(2), not stdio, so that it never holds stderr's
 * stdio lock while it waits: a thread that still writes with fprintf
 * (start-up code, nbdkit's own log) waits only on its own write.
 *
 * Formats: vsnprintf with integers, strings and %m allocates nothing in
 * glibc; %f may (printf_fp.c takes a buffer from malloc when the digits
 * do not fit its alloca cutoff), so messages said from a serving thread
 * print fractions with integers (full-warning.c).
 */
#ifndef CSWAP_DAEMON_LOG_H
#define CSWAP_DAEMON_LOG_H

#include <stdarg.h>

/* Says FMT (a whole line, its newline included) on stderr, through the
 * ring while the drain runs.  Thread-safe; never waits while it runs.
 */
extern void daemon_log (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));
extern void daemon_log_v (const char *fmt, va_list ap)
  __attribute__ ((format (printf, 1, 0)));

/* Starts the drain thread; PROGRAM names the dropped-messages line.
 * Returns 0, or a positive errno (then daemon_log goes on writing at
 * once).  Called once, before the first thread that serves I/O starts.
 */
extern int daemon_log_start (const char *program);

/* Writes what the ring holds and stops the drain; daemon_log writes at
 * once again.  Safe without daemon_log_start.  After the threads that
 * serve I/O have stopped.
 */
extern void daemon_log_stop (void);

#endif /* CSWAP_DAEMON_LOG_H */
