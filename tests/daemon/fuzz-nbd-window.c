/* cswap: the fuzz target for window export names (daemon/nbdkit/nbd-window.h),
 * which any NBD client sends.
 *
 * Any bytes as a name, against a device of 8 MiB: nbd_window_parse()
 * says 0 exactly when the name lacks the prefix; 1 only for a window of
 * whole pages, at least two, within the device, which prints back as a
 * name that parses to the same window; -1 with a reason otherwise.  The
 * name is copied to a heap buffer of its own length, so that a read past
 * its end is the sanitizer's to catch (as it caught one).
 *
 * Built with libFuzzer when the compiler is clang; with gcc,
 * tests/lib/fuzz-driver.c supplies a main() that replays the seed corpus
 * and random mutations.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbd-window.h"
#include "page.h"

#define DEVICE_BYTES (UINT64_C (8) << 20)

extern int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
fail (const char *what, const char *name)
{
  fprintf (stderr, "fuzz-nbd-window: %s: \"%s\"\n", what, name);
  abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *name = malloc (size + 1), again[64];
  uint64_t offset = 1, length = 1, offset2, length2;
  const char *why = NULL;
  int r;

  if (name == NULL)
    return 0;
  memcpy (name, data, size);
  name[size] = '\0';
  r = nbd_window_parse (name, DEVICE_BYTES, &offset, &length, &why);
  if ((r == 0) != (strncmp (name, NBD_WINDOW_PREFIX,
                            strlen (NBD_WINDOW_PREFIX)) != 0))
    fail ("0 is not exactly the names without the prefix", name);
  if (r == -1 && (why == NULL || strncmp (why, "export \"", 8)))
    fail ("refused without a reason", name);
  if (r == 1) {
    if (offset % CSWAP_PAGE_SIZE || length % CSWAP_PAGE_SIZE
        || length < 2 * CSWAP_PAGE_SIZE || offset > DEVICE_BYTES
        || length > DEVICE_BYTES - offset)
      fail ("a window that is not whole pages within the device", name);
    snprintf (again, sizeof again, NBD_WINDOW_PREFIX "%" PRIu64 ":%" PRIu64,
              offset, length);
    if (nbd_window_parse (again, DEVICE_BYTES, &offset2, &length2, &why) != 1
        || offset2 != offset || length2 != length)
      fail ("the window does not print back as itself", name);
  }
  if (r < -1 || r > 1)
    fail ("an answer other than -1, 0 or 1", name);
  free (name);
  return 0;
}
