/* cswap: this process's resident and locked memory (/proc/self/status).
 *
 * What an operator checks to see that the daemon's own memory is bounded
 * by its options: VmRSS is everything resident, VmHWM the most that ever
 * was (what the machine had to find for the device at its worst), VmLck
 * what mlockall has pinned (all of it, once the daemon locks its memory).
 */
#ifndef CSWAP_PROCESS_MEMORY_H
#define CSWAP_PROCESS_MEMORY_H

#include <stdint.h>

struct process_memory {
  uint64_t rss_bytes;           /* VmRSS */
  uint64_t peak_bytes;          /* VmHWM */
  uint64_t locked_bytes;        /* VmLck */
};

/* All 0 when /proc is unreadable. */
extern void process_memory_usage (struct process_memory *usage);

#endif /* CSWAP_PROCESS_MEMORY_H */
