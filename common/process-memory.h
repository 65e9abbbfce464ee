/* cswap: this process's resident and locked memory (/proc/self/status).
 *
 * What an operator checks to see that the daemon's own memory is bounded
 * by its options: VmRSS is everything resident, VmLck what mlockall has
 * pinned (all of it, once the daemon locks its memory).
 */
#ifndef CSWAP_PROCESS_MEMORY_H
#define CSWAP_PROCESS_MEMORY_H

#include <stdint.h>

/* Both 0 when /proc is unreadable. */
extern void process_memory_usage (uint64_t *rss_bytes, uint64_t *locked_bytes);

#endif /* CSWAP_PROCESS_MEMORY_H */
