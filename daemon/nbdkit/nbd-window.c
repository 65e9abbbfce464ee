/* cswap: window exports (nbd-window.h). */
#include <stdio.h>
#include <string.h>

#include "nbd-window.h"
#include "page.h"
#include "parse.h"

/* Longest decimal uint64_t, and its NUL. */
#define FIELD_BYTES 21

/* Per thread: opens run on nbdkit's connection threads. */
static _Thread_local char why_buffer[160];

static int
malformed (const char *name, const char *reason, const char **why)
{
  snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\": %s (%s"
            "OFFSET:LENGTH, in bytes)", name, reason, NBD_WINDOW_PREFIX);
  *why = why_buffer;
  return -1;
}

int
nbd_window_parse (const char *name, uint64_t device_bytes, uint64_t *offset,
                  uint64_t *length, const char **why)
{
  const char *fields, *colon, *reason;
  char first[FIELD_BYTES];

  if (strncmp (name, NBD_WINDOW_PREFIX, strlen (NBD_WINDOW_PREFIX)))
    return 0;
  fields = name + strlen (NBD_WINDOW_PREFIX);
  colon = strchr (fields, ':');
  if (colon == NULL || (size_t) (colon - fields) >= sizeof first)
    return malformed (name, "not a window", why);
  memcpy (first, fields, colon - fields);
  first[colon - fields] = '\0';
  if (parse_uint64 (first, 0, UINT64_MAX, offset, &reason) == -1
      || parse_uint64 (colon + 1, 2 * CSWAP_PAGE_SIZE, UINT64_MAX, length,
                       &reason) == -1)
    return malformed (name, reason, why);
  if (*offset % CSWAP_PAGE_SIZE || *length % CSWAP_PAGE_SIZE)
    return malformed (name, "not in whole pages", why);
  if (*offset > device_bytes || *length > device_bytes - *offset)
    return malformed (name, "beyond the end of the device", why);
  return 1;
}
