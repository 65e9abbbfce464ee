/* cswap: answering FUSE_INIT without libfuse.
 *
 * libfuse 3.14 builds the INIT reply itself and cannot ask for
 * FUSE_OVER_IO_URING, so the raw transports mount with libfuse and then
 * read the kernel's INIT from /dev/fuse and answer it here.  Single
 * threaded: called once, before any transport thread starts.
 */
#ifndef CSWAP_FUSE_RAW_INIT_H
#define CSWAP_FUSE_RAW_INIT_H

#include <stdbool.h>
#include <stdint.h>

/* What the kernel's INIT offered. */
struct raw_init {
  uint64_t unique;
  uint32_t major, minor;
  uint64_t flags;               /* flags, and flags2 above bit 31 */
};

/* Reads requests from FD until the INIT: 0, or -1 with *WHY set. */
extern int raw_init_read (int fd, struct raw_init *init, const char **why);

extern bool raw_init_offers_uring (const struct raw_init *init);

/* Answers INIT, asking for FUSE over io_uring when OVER_IO_URING (the
 * kernel then holds requests back until every queue has ring entries).
 * 0, or -1 with *WHY set.
 */
extern int raw_init_reply (int fd, const struct raw_init *init,
                           bool over_io_uring, const char **why);

#endif /* CSWAP_FUSE_RAW_INIT_H */
