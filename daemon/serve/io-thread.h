/* cswap: naming and binding a front end's per-CPU I/O thread.
 *
 * The io_uring queue engine (io-queues.h) runs one thread per CPU queue,
 * for the FUSE rings and the ublk queues alike: the kernel queues a
 * request on the queue of the CPU that sends it, so a thread bound to
 * that CPU is woken there, and, real-time (memory-safety.h), preempts whatever ran there
 * (doc/design.md, "Idle CPUs and halt polling": 10% off a swapping
 * Python program's time).
 */
#ifndef CSWAP_IO_THREAD_H
#define CSWAP_IO_THREAD_H

/* Names the calling thread PREFIX-CPU (for top -H and the tests; at
 * most 15 bytes are kept) and binds it to CPU, unless the daemon may not
 * run there (a cpuset, CPUAffinity=, taskset): the thread then floats,
 * as it does if the binding fails.
 */
extern void io_thread_name_and_pin (const char *prefix, unsigned cpu);

#endif /* CSWAP_IO_THREAD_H */
