/* cswap: number options of the command-line tools (tests and benchmarks).
 *
 * The daemons report a bad value and go on serving; a tool has nothing to
 * go on with, so these print "PROGRAM: OPTION: 'ARG': reason" and exit 2,
 * the tools' usage and set-up status.
 */
#ifndef CSWAP_TOOL_OPTION_H
#define CSWAP_TOOL_OPTION_H

#include <stdint.h>

#define TOOL_EXIT_SETUP 2

/* ARG as a decimal integer in [MIN, MAX] (common/parse.h), or exit. */
extern uint64_t tool_option_uint64 (const char *option, const char *arg,
                                    uint64_t min, uint64_t max);

#endif /* CSWAP_TOOL_OPTION_H */
