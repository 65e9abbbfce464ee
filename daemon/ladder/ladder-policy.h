/* cswap: when the ladder's follower swaps a step on or off — a pure
 * function of the steps' state, so that a table of cases can test it
 * (tests/daemon/test-ladder-policy.c).
 *
 * The ladder (doc/design.md, "The device ladder") is loop devices over
 * consecutive windows of the one FUSE file, highest priority first.
 * With ladder-online = follow the daemon keeps online only what the swap
 * in use needs plus a headroom H, and at least a floor F of swap
 * (ladder-follow.h runs this policy):
 *
 *   on   when the free swap of the online steps is below H, or the online
 *        steps give less than F, the first step in ladder order that is
 *        offline (and not resting after a failure) goes on: usually the
 *        next one down;
 *   off  when the last online step in ladder order (the lowest priority
 *        one, the kernel's last choice) holds at most
 *        LADDER_OFF_MAX_USED_BYTES and the online steps without it still
 *        have at least 2 H free besides room for what it holds, and give
 *        at least F, it goes off; the first LADDER_ALWAYS_ON_STEPS steps
 *        never do;
 *   keep otherwise, and whenever no step is online at all: swap turned
 *        off by someone else (swapoff -a, systemd at shutdown) is not the
 *        follower's to turn on again.
 *
 * One action per call; the caller acts, reads the kernel's figures again
 * and calls again until the answer is keep.  The gap between H and 2 H
 * is the hysteresis: right after a step goes on the free swap without it
 * is below H, so it cannot go off again, and right after one goes off
 * the free swap is at least 2 H, so none goes on again; the floor holds
 * the same way, a step going off only where the rest give F.  Why a
 * floor: the kernel's overcommit heuristic refuses any one allocation
 * larger than RAM plus the swap online, so swap kept offline is room a
 * program's large mmap no longer gets (doc/design.md).  Sizes are what
 * the kernel gives (a window less its header page), used the kernel's
 * own count (its Used: swap-cache pages included).
 */
#ifndef CSWAP_LADDER_POLICY_H
#define CSWAP_LADDER_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* The first step: what `cswap up` swaps on itself, and what keeps the
 * device swap (so the daemon refuses SIGTERM) whatever the follower does.
 */
#define LADDER_ALWAYS_ON_STEPS 1
/* What the last step may still hold and go off: a few pages.  When a
 * process exits while one of its pages is locked or being written, the
 * kernel cannot free that page's slot then, and leaves it in the swap
 * cache, mapped by nobody, until reclaim takes the page: on a machine
 * with memory to spare, never.  CI saw 16 KiB so left on the last step
 * hold the ladder at four steps after the workload was gone.  swapoff
 * drops such pages (or brings a few live ones back into memory).
 */
#define LADDER_OFF_MAX_USED_BYTES (64u * 4096)

struct ladder_step_view {
  uint64_t size_bytes;          /* swap the step gives when online */
  uint64_t used_bytes;          /* the kernel's Used; 0 when offline */
  bool online;
  bool resting;                 /* a swapon or swapoff of it failed lately */
};

enum ladder_verb {
  LADDER_KEEP,
  LADDER_SWAP_ON,
  LADDER_SWAP_OFF,
};

struct ladder_action {
  enum ladder_verb verb;
  unsigned step;                /* for SWAP_ON and SWAP_OFF */
};

/* The free swap of the online steps among STEPS[0..COUNT). */
extern uint64_t ladder_free_bytes (const struct ladder_step_view *steps,
                                   unsigned count);

/* What to do next with STEPS[0..COUNT), in ladder order, for a headroom
 * of HEADROOM_BYTES and a floor of FLOOR_BYTES (0: none).
 */
extern struct ladder_action ladder_decide (const struct ladder_step_view *steps,
                                           unsigned count,
                                           uint64_t headroom_bytes,
                                           uint64_t floor_bytes);

#endif /* CSWAP_LADDER_POLICY_H */
