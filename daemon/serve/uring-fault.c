/* cswap: faults injected into the io_uring queues (see uring-fault.h);
 * built only into cswap-fuse-faults.
 *
 * Threads: the percentages are set by uring_fault_init(), before the
 * queue threads start, and only read after; the random state is per
 * thread.  No lock.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uring-fault.h"
#include "xorshift.h"

static const char *const kind_name[URING_FAULT_KINDS] = {
  [URING_FAULT_REFUSE] = "refuse",
  [URING_FAULT_COMMIT_EINVAL] = "commit-einval",
  [URING_FAULT_SUBMIT_ERROR] = "submit-error",
};

static unsigned percent[URING_FAULT_KINDS];
static const char *armed_by;    /* CSWAP_URING_FAULT_AFTER, or NULL */
static atomic_bool armed;

void
uring_fault_init (void)
{
  const char *spec = getenv ("CSWAP_FUSE_URING_FAULT");

  armed_by = getenv ("CSWAP_URING_FAULT_AFTER");

  while (spec && *spec) {
    size_t length = strcspn (spec, ",");
    size_t name_length = strcspn (spec, ":,");
    unsigned value = 100;
    int kind;

    if (name_length < length)
      value = strtoul (spec + name_length + 1, NULL, 10);
    for (kind = 0; kind < URING_FAULT_KINDS; kind++)
      if (strlen (kind_name[kind]) == name_length
          && strncmp (spec, kind_name[kind], name_length) == 0)
        break;
    if (kind == URING_FAULT_KINDS)
      fprintf (stderr, "cswap-fuse: CSWAP_FUSE_URING_FAULT: %.*s: unknown, "
               "ignored\n", (int) name_length, spec);
    else {
      percent[kind] = value > 100 ? 100 : value;
      fprintf (stderr, "cswap-fuse: fault injection: %s %u%%\n",
               kind_name[kind], percent[kind]);
    }
    spec += length + (spec[length] == ',');
  }
}

bool
uring_fault_strikes (enum uring_fault_kind kind)
{
  if (percent[kind] == 0)
    return false;
  /* The first thread to remove the file arms the whole process. */
  if (armed_by && !atomic_load (&armed)) {
    if (unlink (armed_by) != 0)
      return false;
    atomic_store (&armed, true);
  }
  return xorshift_next () % 100 < percent[kind];
}
