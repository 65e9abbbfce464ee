/* cswap: fault injection between the tier and the kernel — a test seam,
 * built only into test programs (test-tier, cswap-fuse-faults: those that
 * use tier_faults_dep, tier/meson.build).  No installed program links it,
 * so none reads the variable below.
 *
 * In a program that links it, CSWAP_TIER_FAULT=KIND:PERCENT[,KIND:PERCENT...]
 * in the environment when the tier is opened puts io-fault.c's table in
 * front of the plain one (io-ops.h).  Each KIND then strikes PERCENT of the calls it can strike,
 * the way the kernel could fail them:
 *
 *   eio           every write of a submission fails and writes nothing
 *                 (aimed at no file: the kernel completes it with EBADF)
 *   write-fail    one write of a submission fails so, the others complete
 *   short-write   one write of a submission is cut by a block (a one-block
 *                 write to 512 bytes): a short completion, the rest of its
 *                 run really not written
 *   short-submit  io_uring_enter takes only some of the queued writes (maybe
 *                 none); the others stay queued
 *   eagain        io_uring_enter fails with EAGAIN, taking nothing
 *   eintr         io_uring_enter, submitting or waiting, fails with EINTR
 *   null-sqe      io_uring_get_sqe finds no free entry
 *   read-eintr    pread is interrupted before it reads anything
 *   read-slow     pread returns IO_FAULT_SLOW_READ_MS late, after it has
 *                 read (a slow disk): what it read may be old by then
 *
 * The faults are real, not reported ones: code that took a failed or
 * short write for a success would read back wrong bytes or checksum
 * errors.  Without the variable the tier uses tier_io_plain and none of
 * this file runs but its constructor.
 */
#ifndef CSWAP_TIER_IO_FAULT_H
#define CSWAP_TIER_IO_FAULT_H

#include <stdint.h>

#include "io-ops.h"

#define IO_FAULT_SLOW_READ_MS 200

enum io_fault_kind {
  IO_FAULT_EIO, IO_FAULT_WRITE_FAIL, IO_FAULT_SHORT_WRITE,
  IO_FAULT_SHORT_SUBMIT, IO_FAULT_EAGAIN, IO_FAULT_EINTR,
  IO_FAULT_NULL_SQE, IO_FAULT_READ_EINTR, IO_FAULT_READ_SLOW,
  IO_FAULT_KINDS
};

/* Faults injected of each kind since the process started, all tiers. */
extern void io_fault_counts (uint64_t counts[IO_FAULT_KINDS]);

#endif /* CSWAP_TIER_IO_FAULT_H */
