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
 * nbdkit has no call that says which options it was given, so the command
 * line is read from /proc/self/cmdline.  getopt_long also accepts an
 * unambiguous prefix of a long option: "--exi" is the shortest, as nbdkit's
 * other options that start with "--ex" are --export-name and --exportname.
 * Every word is looked at: the plugin's own are key=value and never start
 * with "--", and a --run COMMAND is one word that starts with its command.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "parent-death.h"

static const char exit_with_parent[] = "--exit-with-parent";
enum { SHORTEST_PREFIX = 5 };   /* "--exi" */

bool
parent_death_asked (int argc, char *const *argv)
{
  for (int i = 1; i < argc; i++) {
    size_t length = strlen (argv[i]);

    if (strcmp (argv[i], "--") == 0)
      break;
    if (length >= SHORTEST_PREFIX && length < sizeof exit_with_parent
        && strncmp (argv[i], exit_with_parent, length) == 0)
      return true;
  }
  return false;
}

enum { MAX_WORDS = 256 };

/* The words of /proc/self/cmdline into ARGV, in BUF; their count, or a
 * negative errno.  A command line longer than BUF is cut, which can only
 * miss a word at its very end.
 */
static int
read_command_line (char *buf, size_t size, char **argv)
{
  ssize_t length = 0, n;
  int fd = open ("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  int argc = 0;

  if (fd == -1)
    return -errno;
  while ((size_t) length < size - 1
         && (n = read (fd, buf + length, size - 1 - length)) > 0)
    length += n;
  close (fd);
  buf[length] = '\0';
  for (char *word = buf; word < buf + length && argc < MAX_WORDS;
       word += strlen (word) + 1)
    argv[argc++] = word;
  return argc;
}

int
parent_death_keep_running (const char **why)
{
  static char buf[16384];
  char *argv[MAX_WORDS];
  int argc = read_command_line (buf, sizeof buf, argv);

  if (argc < 0) {
    *why = "reading /proc/self/cmdline";
    return argc;
  }
  if (parent_death_asked (argc, argv))
    return 0;
  if (prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0) == -1) {
    *why = "prctl PR_SET_PDEATHSIG 0";
    return -errno;
  }
  return 0;
}
