/* cswap: a bounded ring of text messages that many threads push into
 * without ever waiting, and one thread takes out of.
 *
 * Why: a thread that serves the swap device must never block on anything
 * that may need a swap-in, and a write(2) to stderr may (a log file on a
 * tmpfs whose page is in swap on the very device the writer serves: the
 * machine hangs, issue 62).  Such a thread formats its message on its own
 * stack and pushes the text here; one thread that may block writes the
 * ring out (serve/daemon-log.h).
 *
 * How: Vyukov's bounded queue.  Each slot holds a sequence number and the
 * text; the pushers claim positions with one compare-and-swap on `tail`,
 * copy the text into the slot and then publish it by storing the slot's
 * sequence (release).  The one taker reads a slot once its sequence says
 * published (acquire), and frees it for the pusher one lap later by
 * storing the sequence again.  No mutex: a pusher never waits for the
 * taker or another pusher.  A pusher that finds the slot at its position
 * still unfreed (the ring full) drops its message and counts it
 * (message_ring_dropped), so that the taker can say how many were lost.
 *
 *   tail ──► position p, slot p % SLOTS:
 *            sequence == p        free: a pusher may claim p
 *            sequence == p + 1    published: the taker may read p
 *            sequence <  p        still holds p - SLOTS: the ring is full
 *
 * Order: the positions are claimed in the order the pushes are made, so
 * one thread's messages come out in the order it pushed them; between
 * threads, in the order of their claims.  A pusher preempted between its
 * claim and its publish holds the taker back at its slot (later messages
 * wait behind it, none is lost), but no other pusher.
 *
 * Memory: the ring is the caller's (a static one in daemon-log.c, locked
 * at start), SLOTS * 512 bytes; nothing is allocated.  A message longer
 * than MESSAGE_RING_TEXT_BYTES is cut, and keeps its last byte (the
 * newline) so that the lines stay lines.
 */
#ifndef CSWAP_MESSAGE_RING_H
#define CSWAP_MESSAGE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MESSAGE_RING_SLOTS 64           /* a power of two */
#define MESSAGE_RING_SLOT_BYTES 512
#define MESSAGE_RING_TEXT_BYTES \
  (MESSAGE_RING_SLOT_BYTES - sizeof (_Atomic uint64_t) - sizeof (uint32_t))

struct message_slot {
  _Atomic uint64_t sequence;    /* see the table above */
  uint32_t length;              /* written by the pusher that claimed it */
  char text[MESSAGE_RING_TEXT_BYTES];
};

struct message_ring {
  _Atomic uint64_t tail;        /* the next position a pusher claims */
  _Atomic uint64_t dropped;     /* messages refused: the ring was full */
  uint64_t head;                /* the taker's: the next position it reads */
  struct message_slot slots[MESSAGE_RING_SLOTS];
};

_Static_assert ((MESSAGE_RING_SLOTS & (MESSAGE_RING_SLOTS - 1)) == 0,
                "the slot of a position is its low bits");
_Static_assert (sizeof (struct message_slot) == MESSAGE_RING_SLOT_BYTES,
                "a slot is what MESSAGE_RING_SLOT_BYTES says");

/* Empties RING; before any thread uses it. */
extern void message_ring_init (struct message_ring *ring);

/* Copies LENGTH bytes of TEXT into RING (cut to MESSAGE_RING_TEXT_BYTES,
 * its last byte kept).  Never waits, allocates nothing, and is safe in a
 * signal handler.  false: the ring was full, and the message is dropped
 * and counted.
 */
extern bool message_ring_push (struct message_ring *ring, const char *text,
                               size_t length);

/* The taker (one thread at a time): copies the oldest published message
 * into TEXT (MESSAGE_RING_TEXT_BYTES) and frees its slot.  Returns its
 * length, or 0 when there is none to read yet.
 */
extern size_t message_ring_take (struct message_ring *ring, char *text);

/* The messages dropped so far. */
extern uint64_t message_ring_dropped (const struct message_ring *ring);

#endif /* CSWAP_MESSAGE_RING_H */
