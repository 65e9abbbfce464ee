/* cswap: common/parse — every number a user gives goes through these, so
 * each accepts what it documents and refuses the rest with a reason; and
 * common/tool-option, which the tools use to exit on a bad number.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parse.h"
#include "tap.h"
#include "tool-option.h"

static void
test_size (void)
{
  static const struct { const char *s; uint64_t bytes; } good[] = {
    { "0", 0 }, { "4096", 4096 }, { "4k", 4096 }, { "4K", 4096 },
    { "1M", 1 << 20 }, { "2G", 2ull << 30 }, { "2GiB", 2ull << 30 },
    { "3TB", 3ull << 40 }, { "15E", 15ull << 60 },
  };
  static const char *const bad[] = {
    "", "-1", "+1", "G", "1X", "1GiBx", "1 G", "16E", "99999999999999999999",
  };
  const char *why;
  uint64_t bytes;

  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    ok (parse_size (good[i].s, &bytes, &why) == 0 && bytes == good[i].bytes,
        "size \"%s\" is %llu bytes", good[i].s,
        (unsigned long long) good[i].bytes);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why = NULL;
    ok (parse_size (bad[i], &bytes, &why) == -1 && why && *why,
        "size \"%s\" is refused (%s)", bad[i], why ? why : "no reason");
  }
}

static void
test_size_or_zero (void)
{
  static const struct { const char *s; uint64_t bytes; } good[] = {
    { "0", 0 }, { "0K", 0 }, { "8K", 8192 }, { "8192", 8192 },
    { "400M", 400 << 20 }, { "128T", 1ull << 47 },
  };
  static const char *const bad[] = {
    "1", "8191", "128TiBx", "140737488355329", "129T", "16E", "-8K", "",
  };
  const char *why;
  uint64_t bytes;

  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    ok (parse_size_or_zero (good[i].s, 8192, 1ull << 47, &bytes, &why) == 0
        && bytes == good[i].bytes, "0 or 8K..128T: \"%s\" is %llu bytes",
        good[i].s, (unsigned long long) good[i].bytes);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why = NULL;
    bytes = 7;
    ok (parse_size_or_zero (bad[i], 8192, 1ull << 47, &bytes, &why) == -1
        && why && *why && bytes == 7,
        "0 or 8K..128T: \"%s\" is refused, the value untouched (%s)", bad[i],
        why ? why : "no reason");
  }
  parse_size_or_zero ("1", 8192, 1ull << 47, &bytes, &why);
  ok (strcmp (why, "size out of range (0, or 8K..128T)") == 0,
      "the reason gives the range with suffixes (%s)", why);
}

static void
test_percent (void)
{
  const char *why;
  uint64_t bytes;

  ok (parse_size_or_percent ("25%", 1000, &bytes, &why) == 0 && bytes == 250,
      "25%% of 1000 is 250");
  ok (parse_size_or_percent ("12.5%", 1000, &bytes, &why) == 0 && bytes == 125,
      "12.5%% of 1000 is 125");
  ok (parse_size_or_percent ("8M", 1000, &bytes, &why) == 0
      && bytes == 8 << 20, "a plain size is a size");
  ok (parse_size_or_percent ("101%", 1000, &bytes, &why) == -1,
      "101%% is refused");
  ok (parse_size_or_percent ("-5%", 1000, &bytes, &why) == -1,
      "-5%% is refused");
  ok (parse_size_or_percent ("5%%", 1000, &bytes, &why) == -1,
      "5%%%% is refused");
  ok (parse_memory_size ("100%", &bytes, &why) == 0 && bytes > 0,
      "100%% of physical memory is %llu bytes", (unsigned long long) bytes);
}

static void
test_integers (void)
{
  const char *why;
  int64_t i;
  uint64_t u;

  ok (parse_int64 ("-7", -7, 19, &i, &why) == 0 && i == -7, "-7 in -7..19");
  ok (parse_int64 ("20", -7, 19, &i, &why) == -1
      && strcmp (why, "number out of range (-7..19)") == 0,
      "20 is out of -7..19, and the reason says so (%s)", why);
  ok (parse_int64 ("1x", 0, 9, &i, &why) == -1, "1x is refused");
  ok (parse_int64 ("9223372036854775808", INT64_MIN, INT64_MAX, &i, &why)
      == -1, "2^63 is out of int64");
  ok (parse_uint64 ("18446744073709551615", 0, UINT64_MAX, &u, &why) == 0
      && u == UINT64_MAX, "2^64-1 is a uint64");
  ok (parse_uint64 ("-1", 0, UINT64_MAX, &u, &why) == -1,
      "-1 is refused, not wrapped");
  ok (parse_uint64 ("0", 1, 5, &u, &why) == -1, "0 is out of 1..5");
}

static void
test_yes_no (void)
{
  const char *why;
  bool value;

  ok (parse_yes_no ("yes", &value, &why) == 0 && value, "yes");
  ok (parse_yes_no ("off", &value, &why) == 0 && !value, "off");
  ok (parse_yes_no ("maybe", &value, &why) == -1
      && strstr (why, "yes or no"), "maybe is refused");
}

/* The exit status of tool_option_uint64 (ARG, 1..10) in a child. */
static int
tool_option_status (const char *arg)
{
  int status;
  pid_t pid = fork ();

  if (pid == 0)
    _exit (tool_option_uint64 ("--n", arg, 1, 10) == 7 ? 0 : 1);
  waitpid (pid, &status, 0);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static void
test_either (void)
{
  const char *why = NULL;
  bool second = true;

  ok (parse_either ("auto", "auto", "off", &second, &why) == 0 && !second,
      "auto of auto|off is the first");
  ok (parse_either ("off", "auto", "off", &second, &why) == 0 && second,
      "off of auto|off is the second");
  ok (parse_either ("Off", "auto", "off", &second, &why) == -1
      && why && strcmp (why, "use auto or off") == 0 && second,
      "Off is refused, the value untouched (%s)", why ? why : "no reason");
  ok (parse_either ("", "fuse", "nbd", &second, &why) == -1
      && strcmp (why, "use fuse or nbd") == 0, "an empty value is refused (%s)",
      why);
}

static void
test_choice (void)
{
  static const char *const names[] = { "fuse", "nbd", "remote" };
  const char *why = NULL;
  unsigned index = 7;

  ok (parse_choice ("remote", names, 3, &index, &why) == 0 && index == 2,
      "remote of fuse|nbd|remote is the third");
  ok (parse_choice ("fuse", names, 3, &index, &why) == 0 && index == 0,
      "fuse is the first");
  index = 7;
  ok (parse_choice ("NBD", names, 3, &index, &why) == -1 && index == 7
      && strcmp (why, "use fuse, nbd or remote") == 0,
      "NBD is refused, the index untouched (%s)", why);
  ok (parse_choice ("x", names, 1, &index, &why) == -1
      && strcmp (why, "use fuse") == 0, "one name: use fuse (%s)", why);
}

static void
test_tool_option (void)
{
  ok (tool_option_status ("7") == 0, "a tool option in range is returned");
  ok (tool_option_status ("11") == TOOL_EXIT_SETUP,
      "a tool option out of range exits %d", TOOL_EXIT_SETUP);
  ok (tool_option_status ("7x") == TOOL_EXIT_SETUP,
      "a tool option with junk exits %d", TOOL_EXIT_SETUP);
}

int
main (void)
{
  test_size ();
  test_size_or_zero ();
  test_percent ();
  test_integers ();
  test_yes_no ();
  test_either ();
  test_choice ();
  test_tool_option ();
  return tap_done ();
}
