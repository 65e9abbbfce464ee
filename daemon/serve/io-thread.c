/* cswap: naming and binding a front end's per-CPU I/O thread (io-thread.h). */
#include <pthread.h>
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
