/* cswap: reading a small file (a /proc or /sys one) whole into a buffer.
 *
 * open(), read() and close() only, no stdio and no allocation, so that a
 * signal handler may call it (daemon/ladder/swap-users.c asks from the
 * SIGTERM handler), and a thread may under memory pressure
 * (daemon/ladder/ladder-thread.c): the buffer is the caller's.
 */
#ifndef CSWAP_SMALL_FILE_H
#define CSWAP_SMALL_FILE_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/* Reads up to SIZE - 1 bytes of PATH into BUFFER, NUL-terminated; the
 * length, or -1 (errno set by open).
 */
static inline ssize_t
read_small_file (const char *path, char *buffer, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  size_t length = 0;
  ssize_t r;

  if (fd == -1)
    return -1;
  while (length < size - 1
         && (r = read (fd, buffer + length, size - 1 - length)) > 0)
    length += r;
  close (fd);
  buffer[length] = '\0';
  return length;
}

#endif /* CSWAP_SMALL_FILE_H */
