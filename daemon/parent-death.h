/* cswap: outliving the process that started nbdkit (parent-death.c). */
#ifndef CSWAP_PARENT_DEATH_H
#define CSWAP_PARENT_DEATH_H

#include <stdbool.h>

/* True if ARGV (ARGC words, as nbdkit was run) asks for
 * --exit-with-parent, in any form getopt_long takes for it.
 */
bool parent_death_asked (int argc, char *const *argv);

/* Clears the signal the kernel sends this process when its parent dies,
 * unless nbdkit's own command line asked for it (--exit-with-parent).
 * Returns 0, or a negative errno (the command line could not be read, or
 * prctl failed), with *WHY saying what failed.
 */
int parent_death_keep_running (const char **why);

#endif
