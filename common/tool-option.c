/* cswap: number options of the command-line tools (see tool-option.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"
#include "tool-option.h"

uint64_t
tool_option_uint64 (const char *option, const char *arg, uint64_t min,
                    uint64_t max)
{
  const char *why;
  uint64_t value;

  if (parse_uint64 (arg, min, max, &value, &why) == -1) {
    fprintf (stderr, "%s: %s: '%s': %s (want %" PRIu64 "..%" PRIu64 ")\n",
             program_invocation_short_name, option, arg, why, min, max);
    exit (TOOL_EXIT_SETUP);
  }
  return value;
}
