/* cswap: common/message-ring — the messages of the threads that serve
 * I/O: taken in the order pushed, a full ring drops and counts instead of
 * waiting, a long line is cut and stays a line, and threads that push at
 * once while one takes lose nothing they were not told of and keep each
 * thread's order (suite threads: under TSan).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message-ring.h"
#include "tap.h"

static struct message_ring ring;

static void
test_order (void)
{
  char text[MESSAGE_RING_TEXT_BYTES];
  bool in_order = true;

  message_ring_init (&ring);
  ok (message_ring_take (&ring, text) == 0, "an empty ring gives nothing");
  for (int lap = 0; lap < 3; lap++) {
    for (int i = 0; i < 40; i++) {
      char line[32];
      int n = snprintf (line, sizeof line, "line %d\n", lap * 100 + i);
      message_ring_push (&ring, line, n);
    }
    for (int i = 0; i < 40; i++) {
      char line[32];
      int n = snprintf (line, sizeof line, "line %d\n", lap * 100 + i);
      size_t length = message_ring_take (&ring, text);
      if (length != (size_t) n || memcmp (text, line, n) != 0)
        in_order = false;
    }
  }
  ok (in_order, "3 laps of 40 lines come out as they went in");
  ok (message_ring_take (&ring, text) == 0, "and the ring is empty again");
  ok (message_ring_dropped (&ring) == 0, "nothing dropped");
}

static void
test_full (void)
{
  char text[MESSAGE_RING_TEXT_BYTES];
  int pushed = 0;

  message_ring_init (&ring);
  for (int i = 0; i < MESSAGE_RING_SLOTS + 10; i++) {
    char line[32];
    int n = snprintf (line, sizeof line, "%d\n", i);
    pushed += message_ring_push (&ring, line, n);
  }
  ok (pushed == MESSAGE_RING_SLOTS, "a full ring takes %d lines, no more "
      "(%d)", MESSAGE_RING_SLOTS, pushed);
  ok (message_ring_dropped (&ring) == 10, "the 10 refused are counted (%llu)",
      (unsigned long long) message_ring_dropped (&ring));
  size_t length = message_ring_take (&ring, text);
  ok (length == 2 && memcmp (text, "0\n", 2) == 0,
      "the first taken is the first pushed");
  ok (message_ring_push (&ring, "again\n", 6), "a taken slot takes a line "
      "again");
  int taken = 1;
  while ((length = message_ring_take (&ring, text)) > 0)
    taken++;
  ok (taken == MESSAGE_RING_SLOTS + 1 && memcmp (text, "again\n", 6) == 0,
      "all %d come out, the last pushed last", taken);
}

static void
test_long_line (void)
{
  char text[MESSAGE_RING_TEXT_BYTES];
  char line[2 * MESSAGE_RING_TEXT_BYTES];

  message_ring_init (&ring);
  memset (line, 'x', sizeof line);
  line[sizeof line - 1] = '\n';
  message_ring_push (&ring, line, sizeof line);
  size_t length = message_ring_take (&ring, text);
  ok (length == MESSAGE_RING_TEXT_BYTES && text[length - 1] == '\n'
      && text[length - 2] == 'x', "a line longer than a slot is cut to %zu "
      "bytes and keeps its newline", (size_t) MESSAGE_RING_TEXT_BYTES);
  ok (message_ring_push (&ring, "", 0) && message_ring_take (&ring, text) == 0,
      "an empty message is nothing to take");
}

enum { PUSHERS = 4, LINES = 20000 };

static atomic_bool pushing_done;

static void *
push_many (void *arg)
{
  unsigned thread = (unsigned) (uintptr_t) arg;

  for (unsigned i = 0; i < LINES; i++) {
    char line[32];
    int n = snprintf (line, sizeof line, "%u %u\n", thread, i);
    message_ring_push (&ring, line, n);
  }
  return NULL;
}

static void *
set_done_after_join (void *arg)
{
  pthread_t *threads = arg;

  for (int t = 0; t < PUSHERS; t++)
    pthread_join (threads[t], NULL);
  atomic_store (&pushing_done, true);
  return NULL;
}

/* "done" is set once every pusher has returned: after it, the ring is
 * empty for good.
 */
static void
test_threads (void)
{
  pthread_t threads[PUSHERS], joiner;
  char text[MESSAGE_RING_TEXT_BYTES + 1];
  long last[PUSHERS];
  unsigned long taken = 0, out_of_order = 0, garbled = 0;

  message_ring_init (&ring);
  atomic_store (&pushing_done, false);
  for (int t = 0; t < PUSHERS; t++)
    last[t] = -1;
  for (uintptr_t t = 0; t < PUSHERS; t++)
    pthread_create (&threads[t], NULL, push_many, (void *) t);
  pthread_create (&joiner, NULL, set_done_after_join, threads);
  for (;;) {
    bool done = atomic_load (&pushing_done);
    size_t length = message_ring_take (&ring, text);

    if (length == 0) {
      if (done)
        break;
      continue;
    }
    unsigned thread, i;
    text[length] = '\0';
    if (text[length - 1] != '\n' || sscanf (text, "%u %u", &thread, &i) != 2
        || thread >= PUSHERS) {
      garbled++;
      continue;
    }
    if ((long) i <= last[thread])
      out_of_order++;
    last[thread] = i;
    taken++;
  }
  pthread_join (joiner, NULL);

  unsigned long dropped = message_ring_dropped (&ring);
  ok (garbled == 0, "%d pushers at once, one taker: every line taken is "
      "whole (%lu not)", PUSHERS, garbled);
  ok (out_of_order == 0, "each pusher's lines come out in its order (%lu "
      "not)", out_of_order);
  ok (taken + dropped == PUSHERS * LINES && taken > 0,
      "taken %lu + dropped %lu = the %d pushed", taken, dropped,
      PUSHERS * LINES);
}

int
main (void)
{
  test_order ();
  test_full ();
  test_long_line ();
  test_threads ();
  return tap_done ();
}
