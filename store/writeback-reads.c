/* cswap: writeback — pages the kernel has read back.
 *
 * A page the kernel reads from a swap device that is not synchronous (a
 * loop or NBD device; only zram is) stays in its swap cache, and its slot
 * stays allocated, while swap is less than half full.  When the program
 * dirties the page the kernel frees the slot, and tells a userspace
 * device nothing.  So after a read, the copy in the pool is either needed
 * only if the kernel drops its clean page and faults it again, or it is
 * stale.  Measured on sqlite (doc/design.md, "Pages read back"), such
 * copies were most of the pool at its peak.  With a backing file they can
 * go there.
 *
 * But a page faulted again soon would then come from disk: a program that
 * sweeps its memory read-only (stress-ng's verify passes) has its clean
 * pages dropped and faulted again within a second.  So a page goes out
 * only if nothing touched it for a while after its read:
 *
 *   - a read marks the page (idle age at the top, referenced bit clear:
 *     every access undoes both) and notes its slot, unless it was marked
 *     already (under a pool limit, the idle sweep and the CLOCK hand can
 *     make that pair too, on a page that CLOCK then takes anyway);
 *   - notes wait in two generations that rotate every second: at
 *     each rotation the older one is judged, and a page still marked,
 *     untouched for at least that long, joins a writeback batch;
 *   - a queue full drops the note (the page simply stays in memory), and
 *     so does a judgement the writeback budget stops (writeback-budget.c).
 *
 * Pages read from disk then stay there (no promotion): they would only be
 * noted again.
 *
 * Locks: a reader notes under its slot lock, so the reads lock is taken
 * under a slot lock; the writer takes it alone to rotate the generations
 * (lock order: lock-order.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "monotonic.h"
#include "prefault.h"
#include "writeback-internal.h"

/* Notes per generation: 128 KiB of slot numbers, more pages than this
 * machine's swap-ins in a second (about 25k/s at their fastest here).
 */
#define READ_QUEUE_PAGES 32768
#define DEFAULT_READ_WAIT_MS 1000

int
writeback_reads_init (struct writeback *wb, const struct store_config *config)
{
  pthread_mutex_init (&wb->reads_lock, NULL);
  wb->reads_enabled = config->read_writeback;
  wb->reads_wait_ns = (config->read_writeback_wait_ms
                       ? config->read_writeback_wait_ms
                       : DEFAULT_READ_WAIT_MS) * 1000000ull;
  if (!wb->reads_enabled)
    return 0;
  wb->reads_noting = calloc (READ_QUEUE_PAGES, sizeof *wb->reads_noting);
  wb->reads_waiting = calloc (READ_QUEUE_PAGES, sizeof *wb->reads_waiting);
  /* Readers note into them (common/prefault.h). */
  prefault_bytes (wb->reads_noting, READ_QUEUE_PAGES * sizeof *wb->reads_noting);
  prefault_bytes (wb->reads_waiting,
                  READ_QUEUE_PAGES * sizeof *wb->reads_waiting);
  return wb->reads_noting && wb->reads_waiting ? 0 : -ENOMEM;
}

void
writeback_reads_destroy (struct writeback *wb)
{
  free (wb->reads_noting);
  free (wb->reads_waiting);
  pthread_mutex_destroy (&wb->reads_lock);
}

bool
writeback_keeps_reads (struct writeback *wb)
{
  return wb && wb->reads_enabled;
}

void
writeback_note_read (struct writeback *wb, uint32_t slot, bool was_marked)
{
  if (was_marked || !slot_read_markable (wb->slots, slot))
    return;
  lock_acquire (&wb->reads_lock, LOCK_RANK_LEAF);
  if (wb->reads_noted < READ_QUEUE_PAGES) {
    wb->reads_noting[wb->reads_noted++] = slot;
    slot_mark_read (wb->slots, slot);
  }
  lock_release (&wb->reads_lock);
}

/* Writes the pages of SLOTS still marked, in batches, until the disk
 * fails or fills or the budget is spent: those left stay in memory.
 */
static void
write_marked (struct writeback *wb, const uint32_t *slots, unsigned count)
{
  const struct slot_selection sel = { .pick = SLOT_PICK_READ_MARKED,
                                      .include_huge = true };
  struct writeback_source src = { .sel = &sel, .list = slots,
                                  .count = count };
  struct store_writeback_result done;

  writeback_run_batches (wb, &src, 0, &done);
  counter_add (&wb->count->read_pages_written_back, done.pages_written);
}

uint64_t
writeback_reads_due_ns (struct writeback *wb)
{
  return wb->reads_enabled ? wb->reads_rotated_ns + wb->reads_wait_ns
    : UINT64_MAX;
}

void
writeback_drain_reads (struct writeback *wb)
{
  uint64_t now = monotonic_ns ();

  if (!wb->reads_enabled || now < wb->reads_rotated_ns + wb->reads_wait_ns)
    return;
  write_marked (wb, wb->reads_waiting, wb->reads_waiting_count);

  lock_acquire (&wb->reads_lock, LOCK_RANK_LEAF);
  uint32_t *judged = wb->reads_waiting;
  wb->reads_waiting = wb->reads_noting;
  wb->reads_waiting_count = wb->reads_noted;
  wb->reads_noting = judged;
  wb->reads_noted = 0;
  lock_release (&wb->reads_lock);
  wb->reads_rotated_ns = now;
}
