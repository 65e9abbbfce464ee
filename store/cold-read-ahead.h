/* cswap: the cold pages of one read request fetched from the backing
 * file in one disk read.
 *
 * The kernel reads swap ahead: a swap-in is a request of several pages
 * (vm.page-cluster, 8 by default), neighbours in the swap area, which
 * were swapped out together and so were written back together, side by
 * side on the file.  Fetched one by one, a request of 8 cold pages costs
 * 8 disk reads in a row on the queue thread that serves it (zswap's swap
 * file serves the same read-ahead with one).  So before the pages of a
 * read are read, the places of those on the file are looked up, and if
 * two or more lie within COLD_READ_AHEAD_BYTES their blocks are read at
 * once into one of the store's buffers; each page's cold read then takes
 * its record's blocks from there.  Nothing is trusted for it: a record
 * is checked as any fetched alone (tier_check_fetched, against the
 * generation its place has when its slot is locked again), and one that
 * moved or fails is read alone, as before.
 *
 * The buffers are made with the backing file, COLD_READ_AHEAD_BUFFERS of
 * them, so a serving thread never allocates; a read that finds none free
 * reads its pages one by one.  Lock-free: a buffer is claimed with an
 * atomic bit.
 */
#ifndef CSWAP_STORE_COLD_READ_AHEAD_H
#define CSWAP_STORE_COLD_READ_AHEAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tier.h"

#define COLD_READ_AHEAD_BYTES (64u * 1024u)
#define COLD_READ_AHEAD_BUFFERS 8u

struct slot_state;

struct cold_read_ahead_pool {
  unsigned char *buffers;       /* COLD_READ_AHEAD_BUFFERS of the bytes */
  _Atomic uint32_t busy;        /* a bit per buffer in use */
};

/* What one request fetched: BLOCKS [FIRST, END) of the file in BUF.
 * BUF NULL: nothing (one cold page or none, too far apart, no buffer
 * free, or the read failed).
 */
struct cold_read_ahead {
  unsigned char *buf;
  unsigned index;
  uint64_t first, end;
};

/* 0, or -1 with errno (no memory).  A pool never made is all busy. */
extern int cold_read_ahead_init (struct cold_read_ahead_pool *pool);
extern void cold_read_ahead_destroy (struct cold_read_ahead_pool *pool);

/* Before a read of PAGES slots from FIRST_SLOT of SS: fetches the blocks
 * of their records on the file into *AHEAD, as above.  Takes and drops
 * each slot's lock.
 */
extern void cold_read_ahead_start (struct cold_read_ahead_pool *pool,
                                   struct slot_state *ss, uint64_t first_slot,
                                   uint64_t pages,
                                   struct cold_read_ahead *ahead);
/* The blocks of the record at OFFSET of LENGTH payload bytes, copied from
 * AHEAD into BUF: true if AHEAD holds them.
 */
extern bool cold_read_ahead_take (const struct cold_read_ahead *ahead,
                                  struct tier *tier, uint64_t offset,
                                  uint32_t length,
                                  struct tier_record_buf *buf);
/* The request is done: its buffer free again. */
extern void cold_read_ahead_end (struct cold_read_ahead_pool *pool,
                                 struct cold_read_ahead *ahead);

#endif /* CSWAP_STORE_COLD_READ_AHEAD_H */
