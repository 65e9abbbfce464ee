/* cswap: this process's resident and locked memory (see the header). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "process-memory.h"

static uint64_t
status_field_bytes (const char *status, const char *field)
{
  const char *p = strstr (status, field);
  unsigned long long kib;

  if (p == NULL || sscanf (p + strlen (field), " %llu", &kib) != 1)
    return 0;
  return kib * 1024;
}

void
process_memory_usage (struct process_memory *usage)
{
  char status[4096];
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  ssize_t len = fd == -1 ? -1 : read (fd, status, sizeof status - 1);

  if (fd != -1)
    close (fd);
  status[len > 0 ? len : 0] = '\0';
  usage->rss_bytes = status_field_bytes (status, "VmRSS:");
  usage->peak_bytes = status_field_bytes (status, "VmHWM:");
  usage->locked_bytes = status_field_bytes (status, "VmLck:");
}
