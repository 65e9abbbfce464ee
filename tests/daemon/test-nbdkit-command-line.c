/* cswap: daemon/nbdkit-command-line — the plugin reads nbdkit's options
 * from its command line, so every form getopt_long accepts for them is a
 * row here: --exit-with-parent whole or as a prefix down to "--exi" (not
 * "--ex", which --export-name shares), and --tls with a word nbdkit reads
 * as false, joined by "=" or as the next word, the last one winning;
 * nothing after "--" counts, and a plugin's key=value never does; and
 * --threads N, =N, prefixes down to "--th", -t N and -tN, the last one
 * winning, 0 when none is given or its value is no count.
 * Then the reader itself: this program's own command line, word for word.
 */
#include <string.h>

#include "nbdkit-command-line.h"
#include "tap.h"

#define MAX_WORDS 8

struct line_case {
  const char *name;
  const char *words[MAX_WORDS];     /* NULL-terminated, after argv[0] */
  bool exit_with_parent, tls_off;
  unsigned threads;                 /* 0: not given */
};

static const struct line_case cases[] = {
  { "no options", { "cswap", NULL }, false, false, 0 },
  { "--exit-with-parent", { "--exit-with-parent", "cswap", NULL }, true, false, 0 },
  { "--exi (the shortest prefix)", { "--exi", "cswap", NULL }, true, false, 0 },
  { "--ex is --export-name's too", { "--ex", "cswap", NULL }, false, false, 0 },
  { "--exit-with-parents is not it", { "--exit-with-parents", NULL }, false, false, 0 },
  { "after --, not an option", { "cswap", "--", "--exit-with-parent", NULL },
    false, false, 0 },
  { "--tls=off", { "--tls=off", "cswap", NULL }, false, true, 0 },
  { "--tls off", { "--tls", "off", "cswap", NULL }, false, true, 0 },
  { "--tls=NO (any case)", { "--tls=NO", NULL }, false, true, 0 },
  { "--tls=0", { "--tls=0", NULL }, false, true, 0 },
  { "--tls false", { "--tls", "false", NULL }, false, true, 0 },
  { "--tls=on", { "--tls=on", NULL }, false, false, 0 },
  { "--tls=require", { "--tls=require", NULL }, false, false, 0 },
  { "--tls=off then --tls=on: the last wins", { "--tls=off", "--tls=on", NULL },
    false, false, 0 },
  { "--tls=on then --tls off: the last wins", { "--tls=on", "--tls", "off", NULL },
    false, true, 0 },
  { "--tls-psk=off is another option", { "--tls-psk=off", NULL }, false, false, 0 },
  { "--tls at the end, no value", { "cswap", "--tls", NULL }, false, false, 0 },
  { "a plugin key tls=off", { "cswap", "tls=off", NULL }, false, false, 0 },
  { "--tls=off after --", { "cswap", "--", "--tls=off", NULL }, false, false, 0 },
  { "both", { "--exit-with-parent", "--tls", "no", "cswap", NULL }, true, true, 0 },
  { "--threads 2", { "--threads", "2", "cswap", NULL }, false, false, 2 },
  { "--threads=4", { "--threads=4", "cswap", NULL }, false, false, 4 },
  { "--th 3 (the shortest prefix)", { "--th", "3", NULL }, false, false, 3 },
  { "--t is not it", { "--t", "3", NULL }, false, false, 0 },
  { "-t 2", { "-t", "2", "cswap", NULL }, false, false, 2 },
  { "-t8", { "-t8", "cswap", NULL }, false, false, 8 },
  { "--threads 2 then -t 6: the last wins", { "--threads", "2", "-t", "6", NULL },
    false, false, 6 },
  { "--threads=x is no count", { "--threads=x", NULL }, false, false, 0 },
  { "a plugin key threads=2", { "cswap", "threads=2", NULL }, false, false, 0 },
  { "--threads 2 after --", { "cswap", "--", "--threads", "2", NULL },
    false, false, 0 },
};

int
main (int argc, char **argv)
{
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct line_case *c = &cases[i];
    char *words[MAX_WORDS + 1] = { (char *) "nbdkit" };
    int count = 1;

    while (c->words[count - 1])
      words[count] = (char *) c->words[count - 1], count++;
    ok (nbdkit_command_line_has (count, words, "--exit-with-parent", 5)
        == c->exit_with_parent
        && nbdkit_command_line_tls_off (count, words) == c->tls_off
        && nbdkit_command_line_threads (count, words) == c->threads,
        "%s: exit-with-parent %s, TLS %s, threads %u", c->name,
        c->exit_with_parent ? "asked" : "not asked",
        c->tls_off ? "off" : "as nbdkit decides", c->threads);
  }

  char **read;
  int read_count = nbdkit_command_line (&read);
  bool same = read_count == argc;
  for (int i = 0; same && i < argc; i++)
    same = strcmp (read[i], argv[i]) == 0;
  ok (same, "this program's command line read back: %d words (argc %d)",
      read_count, argc);
  return tap_done ();
}
