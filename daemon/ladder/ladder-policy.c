/* cswap: the ladder's policy (see ladder-policy.h). */
#include "ladder-policy.h"

uint64_t
ladder_free_bytes (const struct ladder_step_view *steps, unsigned count)
{
  uint64_t free_bytes = 0;

  for (unsigned i = 0; i < count; i++)
    if (steps[i].online && steps[i].used_bytes < steps[i].size_bytes)
      free_bytes += steps[i].size_bytes - steps[i].used_bytes;
  return free_bytes;
}

struct ladder_action
ladder_decide (const struct ladder_step_view *steps, unsigned count,
               uint64_t headroom_bytes, uint64_t floor_bytes)
{
  const struct ladder_action keep = { LADDER_KEEP, 0 };
  uint64_t free_bytes = ladder_free_bytes (steps, count), online_bytes = 0;
  unsigned last_online = count;

  for (unsigned i = 0; i < count; i++)
    if (steps[i].online) {
      last_online = i;
      online_bytes += steps[i].size_bytes;
    }
  if (last_online == count)
    return keep;

  if (free_bytes < headroom_bytes || online_bytes < floor_bytes) {
    for (unsigned i = 0; i < count; i++)
      if (!steps[i].online && !steps[i].resting)
        return (struct ladder_action) { LADDER_SWAP_ON, i };
    return keep;                /* every step is on: the device is full */
  }

  const struct ladder_step_view *last = &steps[last_online];
  uint64_t last_free = last->used_bytes < last->size_bytes
    ? last->size_bytes - last->used_bytes : 0;
  if (last_online >= LADDER_ALWAYS_ON_STEPS && !last->resting
      && last->used_bytes <= LADDER_OFF_MAX_USED_BYTES
      && free_bytes - last_free >= 2 * headroom_bytes + last->used_bytes
      && online_bytes - last->size_bytes >= floor_bytes)
    return (struct ladder_action) { LADDER_SWAP_OFF, last_online };
  return keep;
}
