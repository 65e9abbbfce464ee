/* cswap: what a front end's per-CPU I/O threads share as they start
 * (io-thread.h).
 */
#include <sched.h>
#include <stdio.h>

#include "io-thread.h"

void
io_thread_name_and_pin (const char *prefix, unsigned cpu)
{
  cpu_set_t allowed, one;
  char name[16];

  snprintf (name, sizeof name, "%s-%u", prefix, cpu);
  pthread_setname_np (pthread_self (), name);
  if (sched_getaffinity (0, sizeof allowed, &allowed) == -1
      || cpu >= CPU_SETSIZE || !CPU_ISSET (cpu, &allowed))
    return;
  CPU_ZERO (&one);
  CPU_SET (cpu, &one);
  (void) sched_setaffinity (0, sizeof one, &one);
}

void
io_thread_start_init (struct io_thread_start *start)
{
  *start = (struct io_thread_start) { .first_error = 0 };
  pthread_mutex_init (&start->lock, NULL);
  pthread_cond_init (&start->reported, NULL);
}

void
io_thread_start_destroy (struct io_thread_start *start)
{
  pthread_mutex_destroy (&start->lock);
  pthread_cond_destroy (&start->reported);
}

void
io_thread_start_report (struct io_thread_start *start, int r, const char *why)
{
  pthread_mutex_lock (&start->lock);
  if (r < 0 && start->first_error == 0) {
    start->first_error = r;
    start->first_why = why;
  }
  start->reports++;
  pthread_cond_signal (&start->reported);
  pthread_mutex_unlock (&start->lock);
}

int
io_thread_start_wait (struct io_thread_start *start, unsigned count,
                      const char **why)
{
  int r;

  pthread_mutex_lock (&start->lock);
  while (start->reports < count)
    pthread_cond_wait (&start->reported, &start->lock);
  r = start->first_error;
  if (why)
    *why = start->first_why;
  pthread_mutex_unlock (&start->lock);
  return r;
}
