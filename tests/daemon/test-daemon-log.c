/* cswap: daemon/serve/daemon-log — with stderr a pipe that is full and
 * not read (any write(2) to it blocks), threads that say lines through
 * daemon_log all return; once the pipe is read again, the lines arrive
 * whole, each thread's in its order, and the ones the full ring dropped
 * are counted in a line of their own.  Before daemon_log_start and after
 * daemon_log_stop, a line is written at once.  (Suite threads: under
 * TSan.)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon-log.h"
#include "tap.h"

enum { SAYERS = 4, LINES = 200 };

static void *
say_lines (void *arg)
{
  unsigned thread = (unsigned) (uintptr_t) arg;

  for (unsigned i = 0; i < LINES; i++)
    daemon_log ("sayer %u line %u\n", thread, i);
  return NULL;
}

/* Everything the pipe's reader end gives until its end. */
struct reading {
  int fd;
  char *text;
  size_t length;
};

static void *
read_all (void *arg)
{
  struct reading *r = arg;
  size_t room = 1 << 20;
  ssize_t n;

  r->text = malloc (room);
  while (r->text && (n = read (r->fd, r->text + r->length,
                               room - 1 - r->length)) > 0)
    r->length += n;
  if (r->text)
    r->text[r->length] = '\0';
  return NULL;
}

/* Fills the pipe behind FD through another open file description, so
 * that FD itself stays blocking: the bytes put in.
 */
static size_t
fill (int fd)
{
  char path[64], block[4096];
  size_t filled = 0;
  ssize_t n;

  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  int other = open (path, O_WRONLY | O_NONBLOCK);
  if (other == -1)
    return 0;
  memset (block, '#', sizeof block);
  for (size_t size = sizeof block; size > 0; size = size > 1 ? 1 : 0)
    while ((n = write (other, block, size)) > 0)
      filled += n;
  close (other);
  return filled;
}

int
main (void)
{
  int fds[2], saved_stderr = dup (2);
  pthread_t sayers[SAYERS], reader;
  struct reading reading = { 0 };

  if (pipe (fds) == -1 || saved_stderr == -1)
    return tap_done ();
  dup2 (fds[1], 2);
  daemon_log ("before the drain\n");
  ok (daemon_log_start ("test-daemon-log") == 0, "the drain starts");
  ok (fill (fds[1]) > 0, "stderr is a pipe, full and not read");
  for (uintptr_t t = 0; t < SAYERS; t++)
    pthread_create (&sayers[t], NULL, say_lines, (void *) t);
  /* A daemon_log that waited on stderr would hang here (meson's timeout). */
  for (int t = 0; t < SAYERS; t++)
    pthread_join (sayers[t], NULL);
  ok (true, "%d threads said %d lines each, none waited on stderr", SAYERS,
      LINES);

  reading.fd = fds[0];
  pthread_create (&reader, NULL, read_all, &reading);
  daemon_log_stop ();
  daemon_log ("after the drain\n");
  dup2 (saved_stderr, 2);
  close (fds[1]);
  pthread_join (reader, NULL);

  /* The lines, past the pipe's filling. */
  long last[SAYERS];
  unsigned long taken = 0, out_of_order = 0, dropped = 0;
  bool before = false;
  long lines = 0, after_at = -1, drop_at = -1;
  for (int t = 0; t < SAYERS; t++)
    last[t] = -1;
  char *save, *line = strtok_r (reading.text ? reading.text : "", "\n", &save);
  for (; line; line = strtok_r (NULL, "\n", &save)) {
    unsigned t, i;
    unsigned long n;

    line += strspn (line, "#");
    lines++;
    if (strcmp (line, "before the drain") == 0)
      before = true;
    else if (strcmp (line, "after the drain") == 0)
      after_at = lines;
    else if (sscanf (line, "sayer %u line %u", &t, &i) == 2 && t < SAYERS) {
      out_of_order += (long) i <= last[t];
      last[t] = i;
      taken++;
    }
    else if (sscanf (line, "test-daemon-log: %lu messages dropped", &n) == 1
             && strstr (line, " (the message ring was full)")) {
      dropped += n;
      drop_at = lines;
    }
    else
      diag ("unexpected: %s", line);
  }
  ok (before, "a line said before the drain was written at once");
  ok (out_of_order == 0, "each thread's lines came out in its order (%lu "
      "not)", out_of_order);
  ok (taken + dropped == SAYERS * LINES && dropped > 0,
      "%lu lines written and %lu counted dropped: the %d said", taken,
      dropped, SAYERS * LINES);
  ok (drop_at > 0 && after_at == lines && drop_at < after_at,
      "the count of the dropped came with the ring's lines, and a line said "
      "after the drain stopped was written at once, last");
  free (reading.text);
  return tap_done ();
}
