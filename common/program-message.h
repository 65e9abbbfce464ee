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

#endif /* CSWAP_PROGRAM_MESSAGE_H */
