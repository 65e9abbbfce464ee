/* cswap: common/size-expr — sizes written as expressions of the RAM, as in
 * zram-generator.  Good expressions give the size a user computes by hand
 * (precedence, left to right, MiB, rounded down to a page); bad ones are
 * refused with what was expected and where.  Then parse_memory_size(),
 * which size= and pool-limit= go through: plain sizes keep their meaning,
 * N% and expressions follow the machine (CSWAP_TEST_RAM_MIB here).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "size-expr.h"
#include "tap.h"

#define MIB (UINT64_C (1) << 20)
#define GIB (UINT64_C (1) << 30)

static void
test_good (void)
{
  static const struct {
    const char *text;
    uint64_t ram_bytes, bytes;
  } good[] = {
    { "min(ram / 2, 4096)", 16 * GIB, 4 * GIB },
    { "min(ram / 2, 4096)", 2 * GIB, 1 * GIB },
    { "max(ram / 4, 512)", 1 * GIB, 512 * MIB },
    { "ram", 3 * GIB, 3 * GIB },
    { "2 + 3 * 4", GIB, 14 * MIB },
    { "(2 + 3) * 4", GIB, 20 * MIB },
    { "10 - 4 - 3", GIB, 3 * MIB },     /* left to right, not 10 - (4 - 3) */
    { "64 / 4 / 2", GIB, 8 * MIB },     /* left to right, not 64 / (4 / 2) */
    { "0.5", GIB, 512 * 1024 },
    { "ram * 0.25", 8 * GIB, 2 * GIB },
    { "min(3, 1, 2) + max(1, 3, 2)", GIB, 4 * MIB },
    { "\tmin( ram/2 ,4096 )  ", 4 * GIB, 2 * GIB },
    { "((ram))", GIB, GIB },
    { "((((((((((((((((((((((((((((((((ram))))))))))))))))))))))))))))))))",
      GIB, GIB },                       /* 32 deep, the most */
    /* A third of 1 MiB is 349525.3 bytes: 85 whole pages. */
    { "ram / 3", MIB, 85 * 4096 },
    /* The largest value: 2^44 - 1 MiB, just under 16 EiB. */
    { "17592186044415", GIB, (UINT64_C (17592186044415) << 20) },
  };
  const char *why;
  uint64_t bytes;

  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    why = NULL;
    bytes = 0;
    ok (size_expr_bytes (good[i].text, good[i].ram_bytes, &bytes, &why) == 0
        && bytes == good[i].bytes,
        "\"%s\" with ram = %llu MiB is %llu bytes (got %llu%s%s)",
        good[i].text, (unsigned long long) (good[i].ram_bytes / MIB),
        (unsigned long long) good[i].bytes, (unsigned long long) bytes,
        why ? ": " : "", why ? why : "");
  }
}

static void
test_bad (void)
{
  static const struct { const char *text, *message; } bad[] = {
    /* Malformed. */
    { "min(ram / 2 4096)", "expected ',' or ')' at column 13, found '4096)'" },
    { "ram +", "expected a number, ram, min, max or '(' at column 6, "
      "found the end" },
    { "", "expected a number, ram, min, max or '(' at column 1" },
    { "(ram / 2", "expected ')' at column 9, found the end" },
    { "ram 2", "expected an operator (+ - * /) or the end at column 5" },
    { "ram / 2)", "expected an operator (+ - * /) or the end at column 8" },
    { "min ram", "expected '(' after min at column 5" },
    { "1.", "expected a digit after '.' at column 3" },
    { "-1", "expected a number, ram, min, max or '(' at column 1" },
    { "ram % 2", "expected an operator (+ - * /) or the end at column 5" },
    { "min(ram / 2, 4G)", "unexpected 'G' at column 15: numbers in an "
      "expression are MiB" },
    { "((((((((((((((((((((((((((((((((((ram", "more than 32 parentheses "
      "deep at column 33" },
    { "min(min(min(min(min(min(min(min(min(min(min(min(min(min(min(min("
      "min(min(min(min(min(min(min(min(min(min(min(min(min(min(min(min("
      "min(1", "more than 32 parentheses deep at column 132" },
    /* Division by zero, even of a computed zero. */
    { "ram / 0", "division by zero at column 5" },
    { "ram / (ram - ram)", "division by zero at column 5" },
    /* Zero or negative results, and less than a page. */
    { "ram - ram", "the result is 0 MiB: a size must be more than zero" },
    { "512 - ram", "the result is -512 MiB: a size must be more than zero" },
    { "0.001", "the result is 0.001 MiB: less than one page" },
    /* Overflow: past what 64 bits of bytes hold. */
    { "ram * 99999999999", "overflow at column 5: a value beyond 16 EiB" },
    { "17592186044416", "overflow at column 1" },
    { "99999999999999999999999", "overflow at column 1" },
    { "ram - 9999999999999 * 2", "overflow at column 21" },
    /* Unknown names. */
    { "rom / 2", "unknown name 'rom' at column 1: use ram, min or max" },
    { "RAM", "unknown name 'RAM' at column 1" },
    { "minimum(1, 2)", "unknown name 'minimum' at column 1" },
    { "ram_mib", "unknown name 'ram_mib' at column 1" },
  };
  const char *why;
  uint64_t bytes;

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    why = NULL;
    ok (size_expr_bytes (bad[i].text, 1024 * MIB, &bytes, &why) == -1
        && why && strstr (why, bad[i].message),
        "\"%s\" is refused: %s", bad[i].text, why ? why : "(no reason)");
  }
}

static void
test_memory_size (void)
{
  const char *why = NULL;
  uint64_t bytes = 0;

  setenv ("CSWAP_TEST_RAM_MIB", "8192", 1);
  ok (parse_memory_size ("min(ram / 2, 4096)", &bytes, &why) == 0
      && bytes == 4 * GIB, "with 8 GiB of RAM, min(ram / 2, 4096) is 4 GiB");
  ok (parse_memory_size ("50%", &bytes, &why) == 0 && bytes == 4 * GIB,
      "50%% of 8 GiB is 4 GiB");
  ok (parse_memory_size ("0.01%", &bytes, &why) == 0
      && bytes == 856064, "0.01%% of 8 GiB is rounded down to a page");
  ok (parse_memory_size ("4096", &bytes, &why) == 0 && bytes == 4096,
      "a plain number is still bytes");
  ok (parse_memory_size ("1G", &bytes, &why) == 0 && bytes == GIB,
      "a plain size is still a size");
  ok (parse_memory_size ("8X", &bytes, &why) == -1 && strstr (why, "suffix"),
      "a plain size with a bad suffix is refused as a size (%s)", why);
  ok (parse_memory_size ("ram / 0", &bytes, &why) == -1
      && strstr (why, "division by zero"),
      "an expression's error comes through (%s)", why);
  setenv ("CSWAP_TEST_RAM_MIB", "2048", 1);
  ok (parse_memory_size ("min(ram / 2, 4096)", &bytes, &why) == 0
      && bytes == GIB, "with 2 GiB of RAM, min(ram / 2, 4096) is 1 GiB");
  setenv ("CSWAP_TEST_RAM_MIB", "lots", 1);
  ok (parse_memory_size ("ram", &bytes, &why) == -1
      && strstr (why, "CSWAP_TEST_RAM_MIB"),
      "a bad CSWAP_TEST_RAM_MIB is named (%s)", why);
  unsetenv ("CSWAP_TEST_RAM_MIB");
  ok (parse_memory_size ("ram", &bytes, &why) == 0 && bytes > 0
      && bytes % 4096 == 0, "ram is this machine's memory, %llu MiB",
      (unsigned long long) (bytes / MIB));
}

int
main (void)
{
  test_good ();
  test_bad ();
  test_memory_size ();
  return tap_done ();
}
