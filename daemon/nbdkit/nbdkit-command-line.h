/* cswap: what nbdkit was told on its command line (nbdkit-command-line.c). */
#ifndef CSWAP_NBDKIT_COMMAND_LINE_H
#define CSWAP_NBDKIT_COMMAND_LINE_H

#include <stdbool.h>
#include <stddef.h>

/* The words nbdkit was run with, from /proc/self/cmdline.  Returns their
 * count and sets *ARGV to them (static storage, read again on each call),
 * or returns a negative errno.
 */
extern int nbdkit_command_line (char ***argv);

/* True if ARGV (ARGC words, as nbdkit was run) has the long option
 * OPTION ("--exit-with-parent"), in any form getopt_long takes for it:
 * the whole name or a prefix of at least SHORTEST characters, the
 * shortest that no other nbdkit option shares.
 */
extern bool nbdkit_command_line_has (int argc, char *const *argv,
                                     const char *option, size_t shortest);

/* True if ARGV turns TLS off (--tls=off, --tls off, or another of the
 * words nbdkit reads as false).  Without it nbdkit offers TLS whenever it
 * finds certificates, its own default directory's included.
 */
extern bool nbdkit_command_line_tls_off (int argc, char *const *argv);

/* The threads nbdkit serves a connection with, as ARGV sets them
 * (--threads N, --threads=N or a prefix down to "--th", -t N, -tN; the
 * last one given wins), or 0 when it does not (nbdkit's default, 16).
 */
extern unsigned nbdkit_command_line_threads (int argc, char *const *argv);

#endif
