/* cswap: daemon/ladder-policy — the ladder's follower decides from the
 * steps' state alone, so every rule is a row of a table here: a step
 * goes on when the online steps' free swap is below the headroom H, the
 * first offline one in ladder order (skipping one that rests after a
 * failure); the last online step goes off only when it holds nothing and
 * the rest keep 2 H free; the first step never goes off; with no step
 * online, or every step on, nothing happens; steps go on until the
 * online ones give the floor, and none goes off below it.  Then a sweep of random
 * states, each followed to where the policy says keep: it gets there in
 * a few steps (no step goes on and off again), and there the headroom
 * holds unless every usable step is on.
 */
#include <stdint.h>

#include "ladder-policy.h"
#include "tap.h"
#include "xorshift.h"

#define MIB (UINT64_C (1) << 20)
#define MAX_STEPS 8

/* A step online with USED MiB of SIZE, offline, or offline and resting. */
#define ON(size, used) { (size) * MIB, (used) * MIB, true, false }
#define ON_RESTING(size, used) { (size) * MIB, (used) * MIB, true, true }
#define OFF(size) { (size) * MIB, 0, false, false }
#define OFF_RESTING(size) { (size) * MIB, 0, false, true }

struct policy_case {
  const char *name;
  uint64_t headroom_mib;
  unsigned count;
  struct ladder_step_view steps[MAX_STEPS];
  enum ladder_verb verb;
  unsigned step;
  uint64_t floor_mib;           /* 0 (none) unless a row says */
};

static const struct policy_case cases[] = {
  { "idle: the first step alone, empty, more than H free", 32, 5,
    { ON (64, 0), OFF (64), OFF (128), OFF (256), OFF (512) },
    LADDER_KEEP, 0, 0 },
  { "free (34) just above H (32): keep", 32, 5,
    { ON (64, 30), OFF (64), OFF (128), OFF (256), OFF (512) },
    LADDER_KEEP, 0, 0 },
  { "free exactly H: keep (below H is what turns one on)", 32, 3,
    { ON (64, 32), OFF (64), OFF (128) }, LADDER_KEEP, 0, 0 },
  { "free below H: the next step goes on", 32, 5,
    { ON (64, 40), OFF (64), OFF (128), OFF (256), OFF (512) },
    LADDER_SWAP_ON, 1, 0 },
  { "two on, free below H: the third", 32, 5,
    { ON (64, 64), ON (64, 40), OFF (128), OFF (256), OFF (512) },
    LADDER_SWAP_ON, 2, 0 },
  { "the next step rests after a failed swapon: the one after it", 32, 5,
    { ON (64, 64), ON (64, 40), OFF_RESTING (128), OFF (256), OFF (512) },
    LADDER_SWAP_ON, 3, 0 },
  { "every offline step rests: keep", 32, 3,
    { ON (64, 64), OFF_RESTING (64), OFF_RESTING (128) }, LADDER_KEEP, 0, 0 },
  { "every step on and full: keep (nothing left to add)", 32, 3,
    { ON (64, 64), ON (64, 64), ON (128, 120) }, LADDER_KEEP, 0, 0 },
  { "the first step turned off by hand, free below H: it goes on again",
    32, 4, { OFF (64), ON (64, 50), OFF (128), OFF (256) },
    LADDER_SWAP_ON, 0, 0 },
  { "no step online at all (swapoff -a): keep, whatever the free swap",
    32, 3, { OFF (64), OFF (64), OFF (128) }, LADDER_KEEP, 0, 0 },
  { "last online empty, the rest 2 H free: it goes off", 32, 5,
    { ON (64, 0), ON (64, 0), OFF (128), OFF (256), OFF (512) },
    LADDER_SWAP_OFF, 1, 0 },
  { "last online empty, the rest exactly 2 H free: off", 16, 3,
    { ON (64, 32), ON (64, 0), OFF (128) }, LADDER_SWAP_OFF, 1, 0 },
  { "last online empty, the rest under 2 H free: keep (hysteresis)", 32, 5,
    { ON (64, 10), ON (64, 0), OFF (128), OFF (256), OFF (512) },
    LADDER_KEEP, 0, 0 },
  { "last online holds 16 KiB (swap cache left by a process gone): off",
    8, 5, { ON (64, 0), ON (64, 0), { 128 * MIB, 16384, true, false },
            OFF (256), OFF (512) }, LADDER_SWAP_OFF, 2, 0 },
  { "last online holds a few pages, the rest short of 2 H besides them: "
    "keep", 8, 3, { ON (16, 0), { 16 * MIB, 16384, true, false }, OFF (32) },
    LADDER_KEEP, 0, 0 },
  { "last online holds more than a few pages: keep", 8, 5,
    { ON (64, 0), ON (64, 0), ON (128, 1), OFF (256), OFF (512) },
    LADDER_KEEP, 0, 0 },
  { "a middle step empty, the last not: keep (only the last goes off)", 8,
    4, { ON (64, 10), ON (64, 0), ON (128, 4), OFF (256) },
    LADDER_KEEP, 0, 0 },
  { "four on, three empty: the last of them goes off first", 16, 5,
    { ON (64, 20), ON (64, 0), ON (128, 0), ON (256, 0), OFF (512) },
    LADDER_SWAP_OFF, 3, 0 },
  { "the last online rests after a failed swapoff: keep", 16, 3,
    { ON (64, 0), ON (64, 0), ON_RESTING (128, 0) }, LADDER_KEEP, 0, 0 },
  { "the first step alone never goes off, however empty", 1, 3,
    { ON (64, 0), OFF (64), OFF (128) }, LADDER_KEEP, 0, 0 },
  { "a headroom of 0 (the configuration refuses it): the first step still "
    "stays on", 0, 3, { ON (64, 0), OFF (64), OFF (128) }, LADDER_KEEP, 0, 0 },
  { "a headroom above the first step: the second stays on at idle", 96, 3,
    { ON (64, 0), ON (64, 0), OFF (128) }, LADDER_KEEP, 0, 0 },
  { "a headroom above the first step: at idle with one, another goes on",
    96, 3, { ON (64, 0), OFF (64), OFF (128) }, LADDER_SWAP_ON, 1, 0 },
  { "Used above Size (a kernel race) counts as full, not as huge", 32, 3,
    { ON (64, 70), OFF (64), OFF (128) }, LADDER_SWAP_ON, 1, 0 },
  { "one step, no ladder (ladder-step 0): keep", 32, 1,
    { ON (1024, 1000) }, LADDER_KEEP, 0, 0 },
  { "no steps: keep", 32, 0, { { 0 } }, LADDER_KEEP, 0, 0 },
  { "the floor (100) above the first step, H free: the second goes on",
    32, 4, { ON (64, 0), OFF (64), OFF (128), OFF (256) },
    LADDER_SWAP_ON, 1, 100 },
  { "the floor met (128 of 100), H free: keep", 32, 4,
    { ON (64, 0), ON (64, 0), OFF (128), OFF (256) }, LADDER_KEEP, 0, 100 },
  { "the floor met exactly: keep", 32, 3,
    { ON (64, 0), ON (64, 0), OFF (128) }, LADDER_KEEP, 0, 128 },
  { "the last step empty, but off the rest would give under the floor: "
    "keep", 16, 4, { ON (64, 0), ON (64, 0), ON (128, 0), OFF (256) },
    LADDER_KEEP, 0, 200 },
  { "the last step empty, the rest give the floor and 2 H: off", 16, 4,
    { ON (64, 0), ON (64, 0), ON (128, 0), OFF (256) },
    LADDER_SWAP_OFF, 2, 128 },
  { "below the floor, the next step rests: the one after it", 32, 4,
    { ON (64, 0), OFF_RESTING (64), OFF (128), OFF (256) },
    LADDER_SWAP_ON, 2, 100 },
  { "a floor above the whole ladder: every step on, then keep", 32, 3,
    { ON (64, 0), ON (64, 0), ON (128, 0) }, LADDER_KEEP, 0, 4096 },
  { "below the floor with no step online (swapoff -a): keep", 32, 3,
    { OFF (64), OFF (64), OFF (128) }, LADDER_KEEP, 0, 1024 },
};

static const char *
verb_name (enum ladder_verb verb)
{
  switch (verb) {
  case LADDER_KEEP: return "keep";
  case LADDER_SWAP_ON: return "on";
  case LADDER_SWAP_OFF: return "off";
  }
  return "?";
}

static void
test_table (void)
{
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct policy_case *c = &cases[i];
    struct ladder_action a = ladder_decide (c->steps, c->count,
                                            c->headroom_mib * MIB,
                                            c->floor_mib * MIB);
    bool same = a.verb == c->verb && (a.verb == LADDER_KEEP
                                      || a.step == c->step);

    ok (same, "%s: %s %u (got %s %u)", c->name, verb_name (c->verb),
        c->step, verb_name (a.verb), a.step);
  }
  {
    struct ladder_step_view steps[] = { ON (64, 10), ON (64, 70), OFF (128) };

    ok (ladder_free_bytes (steps, 3) == 54 * MIB,
        "free: the online steps' size less use, none below 0, offline "
        "ones not counted");
  }
}

/* The kernel's side of an action: a step on or off, empty.  (Pages stay
 * where they are: the kernel moves none between steps.)
 */
static void
apply (struct ladder_step_view *steps, struct ladder_action a)
{
  steps[a.step].online = a.verb == LADDER_SWAP_ON;
  steps[a.step].used_bytes = 0;
}

static uint64_t
random_below (uint64_t n)
{
  return n ? xorshift_next () % n : 0;
}

/* Random ladders (step, step, 2 step, …) in random states, followed to a
 * fixed point.
 */
static void
test_sweep (void)
{
  unsigned states = 20000, too_long = 0, flapped = 0, short_of_room = 0,
    under_floor = 0, first_off = 0;

  for (unsigned s = 0; s < states; s++) {
    struct ladder_step_view steps[MAX_STEPS];
    unsigned count = 1 + random_below (MAX_STEPS);
    uint64_t step_mib = 1 + random_below (128);
    uint64_t headroom = (1 + random_below (4 * step_mib)) * MIB;
    /* No floor in a third of the states, else up to the whole ladder's
     * size and beyond.
     */
    uint64_t floor = random_below (3)
      ? random_below ((step_mib << count) + 1) * MIB : 0;
    unsigned rounds = 0;
    struct ladder_action a, last = { LADDER_KEEP, 0 };

    for (unsigned i = 0; i < count; i++) {
      uint64_t size = (i < 2 ? step_mib : step_mib << (i - 1)) * MIB;
      bool online = i == 0 || random_below (2);

      steps[i] = (struct ladder_step_view) {
        .size_bytes = size,
        .online = online,
        .used_bytes = online && random_below (3) ? random_below (size + 1) : 0,
        .resting = i > 0 && random_below (8) == 0,
      };
    }
    while ((a = ladder_decide (steps, count, headroom, floor)).verb
           != LADDER_KEEP) {
      if (a.verb == LADDER_SWAP_OFF && a.step < LADDER_ALWAYS_ON_STEPS)
        first_off++;
      if (last.verb != LADDER_KEEP && last.verb != a.verb
          && last.step == a.step)
        flapped++;
      apply (steps, a);
      last = a;
      if (++rounds > 2 * count) {
        too_long++;
        break;
      }
    }
    bool room_left = false, any_online = false;
    uint64_t online_bytes = 0;
    for (unsigned i = 0; i < count; i++) {
      room_left |= !steps[i].online && !steps[i].resting;
      any_online |= steps[i].online;
      online_bytes += steps[i].online ? steps[i].size_bytes : 0;
    }
    if (ladder_free_bytes (steps, count) < headroom && room_left)
      short_of_room++;
    if (any_online && online_bytes < floor && room_left)
      under_floor++;
  }
  ok (too_long == 0, "%u random states: each reaches keep within 2 actions "
      "a step (%u did not)", states, too_long);
  ok (flapped == 0, "no step goes on and straight off again, or off and "
      "on (%u did)", flapped);
  ok (short_of_room == 0, "at keep, H is free unless every usable step is "
      "on (%u short)", short_of_room);
  ok (under_floor == 0, "at keep, the steps online give the floor unless "
      "every usable step is on (%u short)", under_floor);
  ok (first_off == 0, "the first step never goes off (%u times)", first_off);
}

int
main (void)
{
  test_table ();
  test_sweep ();
  return tap_done ();
}
