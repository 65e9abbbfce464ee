/* cswap: daemon/ladder-record — the ladder's hand-over, recorded in the
 * store's note for a daemon that takes over from a killed one: what is
 * saved loads back whole; a cleared note and a never-written one (zeros)
 * load as nothing, one whose writer was killed in a save as the old
 * record or nothing, never a mix; one
 * whose count or names no writer of this layout made is refused.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ladder-record.h"
#include "tap.h"

#define NOTE_BYTES 3072         /* store-segment.h's note */
#define KILLS 300

static unsigned char note[NOTE_BYTES] __attribute__ ((aligned (8)));

static struct ladder_hand_over
sample (unsigned count)
{
  struct ladder_hand_over h = {
    .count = count, .headroom_bytes = 32u << 20, .floor_bytes = 128u << 20,
  };

  for (unsigned i = 0; i < count; i++) {
    snprintf (h.steps[i].device, sizeof h.steps[i].device, "/dev/ublkb%u",
              i + 3);
    h.steps[i].offset_bytes = (uint64_t) i << 26;
    h.steps[i].length_bytes = UINT64_C (1) << 26;
    h.steps[i].priority = 100 - (int) i;
  }
  return h;
}

int
main (void)
{
  struct ladder_hand_over h = sample (5), got;

  ok (ladder_record_bytes () <= NOTE_BYTES,
      "a record (%zu bytes) fits the store's note", ladder_record_bytes ());
  ok (!ladder_record_load (note, &got), "a note of zeros holds no record");

  ladder_record_save (note, &h);
  ok (ladder_record_load (note, &got) && memcmp (&got, &h, sizeof h) == 0,
      "a saved hand-over loads back as saved");
  h = sample (LADDER_MAX_STEPS);
  ladder_record_save (note, &h);
  ok (ladder_record_load (note, &got) && memcmp (&got, &h, sizeof h) == 0,
      "so does one of the most steps (%d), over the last", LADDER_MAX_STEPS);
  ladder_record_clear (note);
  ok (!ladder_record_load (note, &got), "a cleared note holds no record");

  /* Killed inside a save: a child saves two records in turn, for ever,
   * into shared memory, and is killed at a random moment; what is left
   * must load as one of them whole, or as nothing, never a mix.  A save
   * that set the first word before the rest, or left it set while
   * rewriting the rest, loads a mix at most kills.
   */
  unsigned char *shared = mmap (NULL, NOTE_BYTES, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  struct ladder_hand_over a = sample (LADDER_MAX_STEPS), b = sample (7);
  unsigned kills = 0, mixed = 0, whole = 0;

  if (shared == MAP_FAILED)
    tap_bail_out ("mmap: %m");
  for (unsigned round = 0; round < KILLS; round++) {
    pid_t pid;

    ladder_record_save (shared, &a);
    pid = fork ();
    if (pid == -1)
      tap_bail_out ("fork: %m");
    if (pid == 0)
      for (;;) {
        ladder_record_save (shared, &b);
        ladder_record_save (shared, &a);
      }
    usleep (200 + (round * 7919) % 3000);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    kills++;
    if (ladder_record_load (shared, &got)) {
      whole++;
      mixed += memcmp (&got, &a, sizeof got) && memcmp (&got, &b, sizeof got);
    }
  }
  ok (mixed == 0, "killed inside a save %u times: never a mix of two "
      "records (%u loaded whole, %u as nothing)", kills, whole - mixed,
      kills - whole);
  munmap (shared, NOTE_BYTES);

  h = sample (2);
  h.count = LADDER_MAX_STEPS + 1;
  ladder_record_save (note, &h);
  ok (!ladder_record_load (note, &got), "a count past the most steps is "
      "refused");
  h = sample (2);
  h.count = 0;
  ladder_record_save (note, &h);
  ok (!ladder_record_load (note, &got), "so is a record of no steps");
  h = sample (2);
  memset (h.steps[1].device, 'x', sizeof h.steps[1].device);
  ladder_record_save (note, &h);
  ok (!ladder_record_load (note, &got), "and a device name with no end");
  return tap_done ();
}
