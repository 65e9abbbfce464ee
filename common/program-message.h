/* cswap: "PROGRAM: message" on stderr, one line, as every program of
 * cswap's writes its errors (cswapctl's die, cswap-fuse's start-up).
 */
#ifndef CSWAP_PROGRAM_MESSAGE_H
#define CSWAP_PROGRAM_MESSAGE_H

#include <stdarg.h>

/* Writes PROGRAM, ": ", FMT formatted with AP, and a newline to stderr. */
extern void program_message_v (const char *program, const char *fmt,
                               va_list ap)
  __attribute__ ((format (printf, 2, 0)));

/* Defines a static NAME (FMT, …) that writes "PROGRAM: message": the
 * error reporter daemon-life.h asks a front end for.
 */
#define PROGRAM_MESSAGE_FUNCTION(name, program)                          \
  __attribute__ ((format (printf, 1, 2))) static void                    \
  name (const char *fmt, ...)                                            \
  {                                                                      \
    va_list ap;                                                          \
                                                                         \
    va_start (ap, fmt);                                                  \
    program_message_v ((program), fmt, ap);                              \
    va_end (ap);                                                         \
  }

#endif /* CSWAP_PROGRAM_MESSAGE_H */
