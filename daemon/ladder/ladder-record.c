/* cswap: the ladder's hand-over in the store's note (see the header). */
#include <stdatomic.h>
#include <string.h>

#include "ladder-record.h"

/* "ladr": a whole hand-over follows. */
#define NOTE_WHOLE UINT32_C (0x6c616472)

struct record {
  _Atomic uint32_t state;       /* NOTE_WHOLE, or anything else: none */
  uint32_t pad;
  struct ladder_hand_over hand_over;
};

size_t
ladder_record_bytes (void)
{
  return sizeof (struct record);
}

void
ladder_record_clear (void *note)
{
  struct record *n = note;

  atomic_store_explicit (&n->state, 0, memory_order_release);
}

void
ladder_record_save (void *note, const struct ladder_hand_over *h)
{
  struct record *n = note;

  ladder_record_clear (n);
  memcpy (&n->hand_over, h, sizeof *h);
  atomic_store_explicit (&n->state, NOTE_WHOLE, memory_order_release);
}

bool
ladder_record_load (const void *note, struct ladder_hand_over *h)
{
  const struct record *n = note;

  if (atomic_load_explicit (&n->state, memory_order_acquire) != NOTE_WHOLE)
    return false;
  memcpy (h, &n->hand_over, sizeof *h);
  if (h->count == 0 || h->count > LADDER_MAX_STEPS)
    return false;
  for (unsigned i = 0; i < h->count; i++)
    if (memchr (h->steps[i].device, '\0', sizeof h->steps[i].device) == NULL)
      return false;
  return true;
}
