/* cswap: faults injected into the io_uring queues — a test seam compiled
 * only into cswap-fuse-faults and cswap-ublk-faults, the test builds
 * (daemon/meson.build, daemon/ublk/meson.build); in cswap-fuse and
 * cswap-ublk the calls below are stubs that inject nothing, and no
 * variable is read.  The queue engine
 * (io-queues.c) strikes submit-error; the FUSE queues (fuse/fuse-uring.c)
 * the two FUSE commands' refusals.
 *
 * CSWAP_FUSE_URING_FAULT=KIND[:PERCENT][,KIND[:PERCENT]...] in the
 * environment when the queues are made (PERCENT defaults to 100):
 *
 *   refuse         REGISTER goes out with one iovec, which the kernel
 *                  refuses (EINVAL): the ring cannot be had after INIT
 *   commit-einval  COMMIT_AND_FETCH goes out naming no queue (qid out of
 *                  range): the kernel fails it with EINVAL before it
 *                  looks at the request, which stays waiting for its reply
 *   submit-error   io_uring_submit_and_wait is not called and fails with
 *                  EFAULT (the SQEs stay queued for the next call)
 *
 * The first two are the kernel's own refusals, not reported ones.
 *
 * CSWAP_URING_FAULT_AFTER=PATH as well: no fault strikes until a queue
 * thread finds PATH, and removes it; from then on the process's faults
 * strike.  So a test fails a serving daemon's queues when it chooses
 * (tests/vm/guest-ublk-swap-kept), and a process that did not remove it
 * (a standby taking over) is not armed.
 */
#ifndef CSWAP_URING_FAULT_H
#define CSWAP_URING_FAULT_H

#include <stdbool.h>

enum uring_fault_kind {
  URING_FAULT_REFUSE, URING_FAULT_COMMIT_EINVAL, URING_FAULT_SUBMIT_ERROR,
  URING_FAULT_KINDS
};

#ifdef CSWAP_URING_FAULTS
/* Reads the variable; an unknown kind is reported and ignored. */
extern void uring_fault_init (void);
/* Whether KIND strikes this call. */
extern bool uring_fault_strikes (enum uring_fault_kind kind);
#else
static inline void uring_fault_init (void) { }
static inline bool
uring_fault_strikes (enum uring_fault_kind kind)
{
  (void) kind;
  return false;
}
#endif

#endif /* CSWAP_FUSE_URING_FAULT_H */
