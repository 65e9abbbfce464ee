/* cswap: a program's one-line message on stderr (see program-message.h). */
#include <stdio.h>

#include "program-message.h"

void
program_message_v (const char *program, const char *fmt, va_list ap)
{
  fprintf (stderr, "%s: ", program);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
}
