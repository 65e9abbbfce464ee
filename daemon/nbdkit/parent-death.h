/* cswap: outliving the process that started nbdkit (parent-death.c). */
#ifndef CSWAP_PARENT_DEATH_H
#define CSWAP_PARENT_DEATH_H

/* Clears the signal the kernel sends this process when its parent dies,
 * unless nbdkit's command line, ARGV (ARGC words), asked for it
 * (--exit-with-parent).  Returns 0, or a negative errno from prctl.
 */
int parent_death_keep_running (int argc, char *const *argv);

#endif
