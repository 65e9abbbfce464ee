/* cswap: outliving the process that started nbdkit.
 *
 * nbdkit 1.32 (Debian 12) sets PR_SET_PDEATHSIG to SIGTERM whether or not
 * --exit-with-parent was given: the `if (exit_with_parent)` around it was
 * lost in nbdkit's commit 6b03ec8a ("common: Move exit-with-parent code
 * from include/ to utils/", 2022), server/main.c.  So `nbdkit --foreground
 * cswap …` started from a shell that then exits, as `cswap up` does, gets
 * SIGTERM from the kernel the moment that shell exits; nbdkit answers every
 * request after that with ESHUTDOWN and unloads the plugin, and every page
 * swapped to it is lost (seen in a VM: `cswap up` with frontend = nbd, swap
 * write errors 0.24 s after swapon).  A swap server must not die with the
 * shell that started it, so the plugin clears the signal when it loads,
 * unless the user did ask for --exit-with-parent.
 *
 * getopt_long also accepts an unambiguous prefix of a long option: "--exi"
 * is the shortest, as nbdkit's other options that start with "--ex" are
 * --export-name and --exportname.
 */
#include <errno.h>
#include <sys/prctl.h>

#include "nbdkit-command-line.h"
#include "parent-death.h"

int
parent_death_keep_running (int argc, char *const *argv)
{
  if (nbdkit_command_line_has (argc, argv, "--exit-with-parent", 5))
    return 0;
  if (prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0) == -1)
    return -errno;
  return 0;
}
