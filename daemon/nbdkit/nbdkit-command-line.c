/* cswap: what nbdkit was told on its command line.
 *
 * nbdkit has no call that says which options it was given, so the
 * plugin reads /proc/self/cmdline: to keep nbdkit running when the shell
 * that started it exits (parent-death.c), to leave TLS's libraries
 * unlocked when TLS is off (memory-safety.c), and to warn about what
 * leaves a local swap device unsafe (nbdkit-settings.c).  Every word is looked at:
 * the plugin's own are key=value and never start with "--", and a
 * --run COMMAND is one word that starts with its command.  Words after
 * "--" are not options.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nbdkit-command-line.h"

enum { MAX_WORDS = 256 };

int
nbdkit_command_line (char ***argv)
{
  /* A command line longer than this is cut, which can only miss a word
   * at its very end.
   */
  static char buf[16384];
  static char *words[MAX_WORDS];
  ssize_t length = 0, n;
  int fd = open ("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  int argc = 0;

  if (fd == -1)
    return -errno;
  while ((size_t) length < sizeof buf - 1
         && (n = read (fd, buf + length, sizeof buf - 1 - length)) > 0)
    length += n;
  close (fd);
  buf[length] = '\0';
  for (char *word = buf; word < buf + length && argc < MAX_WORDS;
       word += strlen (word) + 1)
    words[argc++] = word;
  *argv = words;
  return argc;
}

bool
nbdkit_command_line_has (int argc, char *const *argv, const char *option,
                         size_t shortest)
{
  size_t whole = strlen (option);

  for (int i = 1; i < argc; i++) {
    size_t length = strlen (argv[i]);

    if (strcmp (argv[i], "--") == 0)
      break;
    if (length >= shortest && length <= whole
        && strncmp (argv[i], option, length) == 0)
      return true;
  }
  return false;
}

/* nbdkit_parse_bool's words for false. */
static bool
means_false (const char *word)
{
  static const char *const false_words[] = { "0", "no", "false", "off" };

  for (size_t i = 0; i < sizeof false_words / sizeof false_words[0]; i++)
    if (strcasecmp (word, false_words[i]) == 0)
      return true;
  return false;
}

bool
nbdkit_command_line_tls_off (int argc, char *const *argv)
{
  /* "--tls" is whole or nothing: every shorter prefix is shared with
   * --tls-certificates, --threads and others.  The last one given wins.
   */
  bool off = false;

  for (int i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--") == 0)
      break;
    if (strncmp (argv[i], "--tls=", 6) == 0)
      off = means_false (argv[i] + 6);
    else if (strcmp (argv[i], "--tls") == 0 && i + 1 < argc)
      off = means_false (argv[++i]);
  }
  return off;
}

/* WORD as a thread count: digits only, above 0; 0 otherwise. */
static unsigned
threads_value (const char *word)
{
  char *end;
  unsigned long n;

  if (*word < '0' || *word > '9')
    return 0;
  errno = 0;
  n = strtoul (word, &end, 10);
  return *end == '\0' && errno == 0 && n <= 65535 ? n : 0;
}

unsigned
nbdkit_command_line_threads (int argc, char *const *argv)
{
  static const char long_name[] = "--threads";
  unsigned threads = 0;

  for (int i = 1; i < argc; i++) {
    const char *word = argv[i];
    const char *equals = strchr (word, '=');
    size_t name_length = equals ? (size_t) (equals - word) : strlen (word);

    if (strcmp (word, "--") == 0)
      break;
    if (name_length >= 4 && name_length <= sizeof long_name - 1
        && strncmp (word, long_name, name_length) == 0) {
      if (equals)
        threads = threads_value (equals + 1);
      else if (i + 1 < argc)
        threads = threads_value (argv[++i]);
    }
    else if (strcmp (word, "-t") == 0 && i + 1 < argc)
      threads = threads_value (argv[++i]);
    else if (strncmp (word, "-t", 2) == 0 && word[2] != '\0')
      threads = threads_value (word + 2);
  }
  return threads;
}
