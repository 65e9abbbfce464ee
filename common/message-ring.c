/* cswap: the message ring (see message-ring.h for the design). */
#include <string.h>

#include "message-ring.h"

void
message_ring_init (struct message_ring *ring)
{
  atomic_init (&ring->tail, 0);
  atomic_init (&ring->dropped, 0);
  ring->head = 0;
  for (uint64_t i = 0; i < MESSAGE_RING_SLOTS; i++) {
    atomic_init (&ring->slots[i].sequence, i);
    ring->slots[i].length = 0;
  }
}

/* Claims a free position: true with *POSITION, or false when full. */
static bool
claim (struct message_ring *ring, uint64_t *position)
{
  uint64_t p = atomic_load_explicit (&ring->tail, memory_order_relaxed);

  for (;;) {
    struct message_slot *slot = &ring->slots[p % MESSAGE_RING_SLOTS];
    uint64_t sequence = atomic_load_explicit (&slot->sequence,
                                              memory_order_acquire);
    int64_t lap = (int64_t) (sequence - p);

    if (lap < 0)
      return false;             /* still holds the message a lap before */
    if (lap > 0)                /* another pusher took p: look again */
      p = atomic_load_explicit (&ring->tail, memory_order_relaxed);
    else if (atomic_compare_exchange_weak_explicit (&ring->tail, &p, p + 1,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed)) {
      *position = p;
      return true;
    }
    /* A failed compare-and-swap has reloaded p. */
  }
}

bool
message_ring_push (struct message_ring *ring, const char *text,
                   size_t length)
{
  uint64_t p;

  if (length == 0)
    return true;                /* nothing to say: take's 0 means none */
  if (!claim (ring, &p)) {
    atomic_fetch_add_explicit (&ring->dropped, 1, memory_order_relaxed);
    return false;
  }
  struct message_slot *slot = &ring->slots[p % MESSAGE_RING_SLOTS];
  if (length > MESSAGE_RING_TEXT_BYTES) {
    /* Cut, keeping the last byte (the newline). */
    memcpy (slot->text, text, MESSAGE_RING_TEXT_BYTES - 1);
    slot->text[MESSAGE_RING_TEXT_BYTES - 1] = text[length - 1];
    length = MESSAGE_RING_TEXT_BYTES;
  }
  else
    memcpy (slot->text, text, length);
  slot->length = length;
  atomic_store_explicit (&slot->sequence, p + 1, memory_order_release);
  return true;
}

size_t
message_ring_take (struct message_ring *ring, char *text)
{
  uint64_t p = ring->head;
  struct message_slot *slot = &ring->slots[p % MESSAGE_RING_SLOTS];

  if (atomic_load_explicit (&slot->sequence, memory_order_acquire) != p + 1)
    return 0;                   /* empty, or its pusher is still copying */
  size_t length = slot->length;
  memcpy (text, slot->text, length);
  atomic_store_explicit (&slot->sequence, p + MESSAGE_RING_SLOTS,
                         memory_order_release);
  ring->head = p + 1;
  return length;
}

uint64_t
message_ring_dropped (const struct message_ring *ring)
{
  return atomic_load_explicit (&ring->dropped, memory_order_relaxed);
}
