/* cswap: writeback — writers waiting for room, and the batches that end
 * their wait.
 *
 * A write that finds the pool at its limit notes how many batches have
 * completed, wakes the writer thread and waits, until a deadline, for one
 * more: every batch,
 * whoever wrote it (a pressure batch, a sweep, read writeback, the
 * cleaner's copies), ends the wait of every writer who asked before it,
 * with its verdict: 0 (try again) or -ENOSPC (writeback cannot make
 * room).  The writer thread asks writeback_writers_waiting whether to
 * keep going (writeback.c).  Past the deadline the writer gives up
 * waiting (-ETIMEDOUT): the caller that serves a request must not wait
 * for a batch without bound, since the batch's own write may need what
 * the request holds (writeback.c, ROOM_WAIT_MS).
 *
 * Below every other writeback file but the settings and the budget: it
 * calls none of them.  Locks: the wake lock only (writeback-internal.h).
 */
#include <errno.h>

#include "monotonic.h"
#include "writeback-internal.h"

void
writeback_post_batch (struct writeback *wb, int verdict)
{
  wake_lock (wb);
  wb->batches_done++;
  wb->room_verdict = verdict;
  pthread_cond_broadcast (&wb->room);
  wake_unlock (wb);
}

int
writeback_wait_for_batch (struct writeback *wb, uint64_t deadline_ns)
{
  struct timespec deadline = monotonic_timespec (deadline_ns);

  wake_lock (wb);
  if (!wb->running || wb->stop) {
    wake_unlock (wb);
    return -ESRCH;
  }
  uint64_t asked_at = wb->batches_done;
  wb->room_wanted++;
  wb->kicked = true;
  pthread_cond_signal (&wb->wake);
  bool expired = false;
  while (wb->batches_done == asked_at && !wb->stop && !expired)
    expired = pthread_cond_timedwait (&wb->room, &wb->wake_lock,
                                      &deadline) == ETIMEDOUT;
  /* Stopped before a batch: try again, and make room here next time. */
  int r = wb->batches_done != asked_at ? wb->room_verdict
          : expired && !wb->stop ? -ETIMEDOUT : 0;
  wb->room_wanted--;
  wake_unlock (wb);
  return r;
}

void
writeback_kick (struct writeback *wb)
{
  wake_lock (wb);
  if (!wb->kicked) {
    wb->kicked = true;
    pthread_cond_signal (&wb->wake);
  }
  wake_unlock (wb);
}

bool
writeback_writers_waiting (struct writeback *wb, bool *stop)
{
  wake_lock (wb);
  bool waiting = wb->room_wanted > 0;
  *stop = wb->stop;
  wake_unlock (wb);
  return waiting;
}
