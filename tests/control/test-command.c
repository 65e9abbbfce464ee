/* cswap: control/ — every command through control_execute() against a real
 * store: the replies are valid JSON with the documented members, the
 * numbers match what was written, compact frees a fragmented pool, set and
 * get round-trip, bad input of every kind gets an error reply and
 * changes nothing, and a writeback stopped by a full backing file or by
 * the writeback budget still reports what it wrote.  A front end's
 * command and numbers (control_extend) come through as its own.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "control.h"
#include "page.h"
#include "store.h"
#include "strict-json.h"
#include "tap.h"

#define DEVICE_BYTES (32 * 1024 * 1024)

static struct control *control;
static struct store *store;
/* Who sends the commands: root, but for test_read_only. */
static enum control_access sender = CONTROL_ACCESS_ALL;

/* Runs LINE (LEN bytes) and returns the reply parsed, or NULL when it is
 * not one line of valid JSON with a boolean "ok".
 */
static json_object *
execute_len (const char *line, size_t len)
{
  size_t reply_len;
  char *reply = control_execute (control, sender, line, len, &reply_len);
  json_tokener *tok = strict_json_tokener_new ();
  json_object *o = NULL, *ok;

  if (reply && reply_len > 0 && strlen (reply) == reply_len
      && memchr (reply, '\n', reply_len) == reply + reply_len - 1)
    o = json_tokener_parse_ex (tok, reply, reply_len - 1);
  if (o && !(json_object_object_get_ex (o, "ok", &ok)
             && json_object_is_type (ok, json_type_boolean))) {
    json_object_put (o);
    o = NULL;
  }
  if (o == NULL)
    diag ("bad reply to '%.40s': %s", line, reply ? reply : "(null)");
  json_tokener_free (tok);
  free (reply);
  return o;
}

static json_object *
execute (const char *line)
{
  return execute_len (line, strlen (line));
}

static bool
is_ok (json_object *o)
{
  json_object *ok;

  return o && json_object_object_get_ex (o, "ok", &ok)
    && json_object_get_boolean (ok);
}

/* An error reply whose message contains WANT. */
static bool
is_error (json_object *o, const char *want)
{
  json_object *error;

  return o && !is_ok (o) && json_object_object_get_ex (o, "error", &error)
    && strstr (json_object_get_string (error), want);
}

static json_object *
get (json_object *o, const char *key)
{
  json_object *value = NULL;

  if (o)
    json_object_object_get_ex (o, key, &value);
  return value;
}

static uint64_t
get_uint (json_object *o, const char *key)
{
  return json_object_get_uint64 (get (o, key));
}

/* The reply to LINE must be an error containing WANT. */
static void
expect_error (const char *line, size_t len, const char *want,
              const char *name)
{
  json_object *o = execute_len (line, len);

  ok (is_error (o, want), "%s: error \"%s\"", name, want);
  json_object_put (o);
}

static void
write_page (uint64_t page, const unsigned char *data)
{
  if (store_write (store, data, CSWAP_PAGE_SIZE, page * CSWAP_PAGE_SIZE))
    tap_bail_out ("store_write failed");
}

/* A page that compresses to about BYTES / 4 of itself: text with a
 * per-page seed, so no two pages are the same.
 */
static void
make_page (unsigned char *page, uint64_t seed)
{
  uint64_t x = seed * 2654435761u + 1;

  for (size_t i = 0; i < CSWAP_PAGE_SIZE; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    page[i] = i % 4 ? 'a' + x % 4 : 'a' + i % 26;
  }
}

static void
test_help (void)
{
  json_object *o = execute ("help");

  ok (is_ok (o) && json_object_array_length (get (o, "commands")) == 9
      && json_object_array_length (get (o, "settings")) == 10,
      "help lists 9 commands and 10 settings");
  json_object_put (o);
}

static void
test_stats (void)
{
  static const char *const members[] = {
    "version", "uptime_seconds", "size_bytes", "original_bytes",
    "compressed_bytes", "pool_bytes", "metadata_bytes", "memory_used_bytes",
    "pool_limit_bytes", "pages_stored", "same_filled_pages", "huge_pages",
    "compressed_pages", "reads", "writes", "trims", "failed_writes",
    "read_errors", "pool_limit_hits", "pages_compacted", "objects_moved",
    "compression_ratio", "effective_ratio", "read_requests", "read_mean_us",
    "read_p50_us", "read_p99_us", "write_requests", "write_p50_us",
    "write_p99_us", "trim_requests", "trim_p50_us", "trim_p99_us",
    "writeback_limit_bytes", "writeback_budget_bytes", "writeback_budget_stops",
  };
  unsigned char page[CSWAP_PAGE_SIZE];
  json_object *o = execute ("stats"), *options;
  bool all = true;

  for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
    if (get (o, members[i]) == NULL) {
      diag ("stats has no %s", members[i]);
      all = false;
    }
  ok (is_ok (o) && all, "stats has every documented member");
  options = get (o, "options");
  ok (get_uint (options, "size_bytes") == DEVICE_BYTES
      && strcmp (json_object_get_string (get (options, "codec")), "zstd") == 0
      && json_object_get_int (get (options, "level")) == 1,
      "stats options: size, codec, level");
  ok (get_uint (o, "pages_stored") == 0 && get_uint (o, "pool_bytes") == 0,
      "an empty store stores nothing");
  json_object_put (o);

  /* 40 same-filled pages, 60 compressible ones. */
  for (uint64_t p = 0; p < 100; p++) {
    if (p < 40)
      memset (page, 0x5a, sizeof page);
    else
      make_page (page, p);
    write_page (p, page);
  }
  o = execute ("stats");
  ok (get_uint (o, "pages_stored") == 100
      && get_uint (o, "same_filled_pages") == 40
      && get_uint (o, "original_bytes") == 100 * CSWAP_PAGE_SIZE
      && get_uint (o, "writes") == 100,
      "stats after writing 100 pages, 40 same-filled: %s",
      json_object_to_json_string (o));
  ok (get_uint (o, "compressed_bytes") > 0
      && get_uint (o, "compressed_bytes") < 60 * CSWAP_PAGE_SIZE
      && json_object_get_double (get (o, "effective_ratio")) > 1,
      "the pages were compressed");
  json_object_put (o);
}

static void
test_classes (void)
{
  json_object *o = execute ("classes"), *classes = get (o, "classes");
  uint64_t used = 0;
  bool shaped = classes != NULL && json_object_array_length (classes) > 10;

  for (size_t i = 0; shaped && i < json_object_array_length (classes); i++) {
    json_object *c = json_object_array_get_idx (classes, i);

    shaped = get (c, "size") && get (c, "pages_per_zspage")
      && get (c, "objects_per_zspage") && get (c, "huge")
      && json_object_array_length (get (c, "zspages")) == 12
      && get (c, "objects_allocated") && get (c, "pages_used")
      && get (c, "pages_freeable");
    used += get_uint (c, "objects_used");
  }
  ok (is_ok (o) && shaped, "classes: every class has every member");
  ok (used == 60, "classes count the 60 stored objects (%llu)",
      (unsigned long long) used);
  json_object_put (o);
}

static void
test_compact (void)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  json_object *o;

  /* Fill, then free 3 pages of every 4: every zspage is left a quarter
   * full, which compaction can pack into a quarter of the pages.
   */
  for (uint64_t p = 1000; p < 3000; p++) {
    make_page (page, p);
    write_page (p, page);
  }
  for (uint64_t p = 1000; p < 3000; p++)
    if (p % 4)
      store_zero (store, CSWAP_PAGE_SIZE, p * CSWAP_PAGE_SIZE);
  o = execute ("compact");
  ok (is_ok (o) && get_uint (o, "pages_freed") > 0
      && get_uint (o, "objects_moved") > 0,
      "compact after fragmenting frees pages: %s",
      json_object_to_json_string (o));
  json_object_put (o);
  o = execute ("stats");
  ok (get_uint (o, "pages_compacted") > 0 && get_uint (o, "objects_moved") > 0,
      "stats count what compaction did");
  json_object_put (o);
}

/* The three settings as "get" shows them, for comparing. */
static char *
settings_text (void)
{
  json_object *o = execute ("get");
  char *text = strdup (json_object_to_json_string (get (o, "settings")));

  json_object_put (o);
  return text;
}

static void
expect_setting (const char *set_line, const char *key, const char *want)
{
  json_object *o = execute (set_line), *after;
  char get_line[64];

  snprintf (get_line, sizeof get_line, "get %s", key);
  after = execute (get_line);
  ok (is_ok (o) && is_ok (after)
      && strcmp (json_object_get_string (get (get (after, "settings"), key)),
                 want) == 0,
      "'%s' then '%s' gives %s", set_line, get_line, want);
  json_object_put (o);
  json_object_put (after);
}

/* recompress: refused without a cold codec; with zstd, pages written
 * with lz4 and left alone for a pass are recompressed by the next.
 */
static void
test_recompress (void)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  json_object *o;

  expect_error ("recompress", strlen ("recompress"),
                "no cold codec (set cold-codec first)",
                "recompress without a cold codec is refused");
  json_object_put (execute ("set codec lz4"));
  for (uint64_t p = 4000; p < 4100; p++) {
    make_page (page, p);
    write_page (p, page);
  }
  json_object_put (execute ("set cold-codec zstd"));
  o = execute ("recompress");
  ok (is_ok (o) && get_uint (o, "pages_recompressed") == 0,
      "the first pass after the writes recompresses nothing");
  json_object_put (o);
  o = execute ("recompress");
  ok (is_ok (o) && get_uint (o, "pages_recompressed") > 0,
      "the second recompresses what stayed: %s", json_object_to_json_string (o));
  json_object_put (o);
  o = execute ("stats");
  ok (get_uint (o, "recompressed_pages") > 0 && get_uint (o, "recompress_passes") == 2,
      "stats count the pages and the passes");
  json_object_put (o);
  for (uint64_t p = 4000; p < 4100; p++)
    store_zero (store, CSWAP_PAGE_SIZE, p * CSWAP_PAGE_SIZE);
  json_object_put (execute ("set cold-codec none"));
  json_object_put (execute ("set codec zstd"));
}

static void
test_settings (void)
{
  static const char *const bad[][2] = {
    { "set bogus 1", "unknown key" },
    { "set pool-limit lots", "pool-limit" },
    { "set pool-limit 101%", "pool-limit" },
    { "set pool-limit 1", "less than 4096 bytes, the smallest limit" },
    { "set pool-limit 4095", "less than 4096 bytes, the smallest limit" },
    { "set pool-limit 0.0000001%", "less than 4096 bytes" },
    { "set level 4294967296", "number out of range (-1000..1000)" },
    { "set codec gzip", "unknown codec" },
    { "set level 99", "levels are" },
    { "set level x", "level" },
    { "get bogus", "unknown key" },
    { "set writeback-limit 4095", "size out of range (0, or 8K..128T)" },
    { "set writeback-burst 129T", "size out of range (0, or 8K..128T)" },
    { "set writeback-limit 1M", "the store refused" },  /* no backing file */
    { "set cold-codec lz4", "unknown cold codec (use none or zstd)" },
    { "set cold-after 0", "number out of range (1..2592000)" },
    { "set cold-after 2592001", "number out of range (1..2592000)" },
  };
  json_object *o = execute ("get");
  char *before;

  ok (is_ok (o) && json_object_object_length (get (o, "settings")) == 10,
      "get with no key lists the 10 settings");
  json_object_put (o);
  expect_setting ("set pool-limit 8M", "pool-limit", "8388608");
  expect_setting ("set level 5", "level", "5");
  expect_setting ("set codec lz4", "codec", "lz4");
  expect_setting ("set codec zstd", "codec", "zstd");
  expect_setting ("set level 3", "level", "3");
  expect_setting ("set\tpool-limit 0\r", "pool-limit", "0");
  expect_setting ("set cold-after 30", "cold-after", "30");
  expect_setting ("set cold-codec zstd", "cold-codec", "zstd");
  expect_setting ("set cold-codec none", "cold-codec", "none");
  o = execute ("set pool-limit 10%");
  ok (is_ok (o) && get_uint (get (o, "settings"), "pool-limit") > 0,
      "set pool-limit 10%% replies the new limit in bytes");
  json_object_put (o);

  before = settings_text ();
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *after;

    expect_error (bad[i][0], strlen (bad[i][0]), bad[i][1], bad[i][0]);
    after = settings_text ();
    ok (strcmp (before, after) == 0, "'%s' changed nothing", bad[i][0]);
    free (after);
  }
  free (before);
  o = execute ("stats");
  ok (get_uint (o, "pool_limit_bytes") > 0, "stats show the limit set");
  json_object_put (o);
}

static void
test_metrics (void)
{
  json_object *o = execute ("metrics");
  const char *text = json_object_get_string (get (o, "metrics"));
  char *copy = strdup (text ? text : ""), *save = NULL;
  unsigned samples = 0, bad = 0;

  for (char *line = strtok_r (copy, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save)) {
    if (strncmp (line, "# HELP cswap_", 13) == 0
        || strncmp (line, "# TYPE cswap_", 13) == 0)
      continue;
    samples++;
    if (strncmp (line, "cswap_", 6) != 0 || strchr (line, ' ') == NULL) {
      diag ("bad sample line: %s", line);
      bad++;
    }
  }
  ok (is_ok (o) && samples > 20 && bad == 0,
      "metrics: %u samples, all named cswap_*", samples);
  ok (text && strstr (text, "# TYPE cswap_writes_total counter\n")
      && strstr (text, "\ncswap_pages_stored ")
      && strstr (text, "# TYPE cswap_pool_bytes gauge\n"),
      "metrics: counters end in _total, bytes in _bytes");
  free (copy);
  json_object_put (o);
}

static void
test_bad_input (void)
{
  static const char long_word[] = "stats ";
  size_t big = 100 * 1024;
  char *line = malloc (big);
  unsigned char garbage[512];
  uint64_t x = 88172645463325252ull;

  expect_error ("", 0, "empty line", "empty line");
  expect_error ("   \t ", 5, "empty line", "blank line");
  expect_error ("frobnicate", 10, "unknown command", "unknown command");
  expect_error ("stats now", 9, "usage: stats", "stats with an argument");
  expect_error ("set pool-limit", 14, "usage: set KEY VALUE", "set, no value");
  expect_error ("get a b", 7, "usage: get", "get, two keys");
  expect_error ("writeback a b c d e f g h", 25, "too many words",
                "too many words");
  expect_error ("writeback", 9, "no backing file configured", "writeback");
  expect_error ("writeback idle=60 max=10 huge", 29,
                "no backing file configured", "writeback with arguments");
  expect_error ("writeback idle", 14, "unknown argument",
                "writeback with a bad argument");
  expect_error ("writeback max=-1", 16, "max=", "writeback, a bad max");
  expect_error ("writeback idle=4294967295", 25,
                "idle=: number out of range (0..2592000)",
                "writeback idle=2^32-1 is out of range, not wrapped");
  expect_error ("writeback idle=2592001", 22,
                "idle=: number out of range (0..2592000)",
                "writeback idle= past 30 days");
  expect_error ("stats\0x", 7, "control character", "a NUL in the line");
  expect_error ("\xff\xfe\x80 \"\\", 6, "unknown command",
                "invalid UTF-8, quote and backslash quoted back safely");
  expect_error ("caf\xc3\xa9", 5, "unknown command 'caf\xc3\xa9'",
                "valid UTF-8 past ASCII quoted back as it is");

  memset (line, 'x', big);
  memcpy (line, long_word, sizeof long_word - 1);
  expect_error (line, big, "line too long", "a 100 KiB line");

  for (unsigned round = 0; round < 200; round++) {
    json_object *o;

    for (size_t i = 0; i < sizeof garbage; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      garbage[i] = x;
    }
    o = execute_len ((char *) garbage, x % sizeof garbage);
    if (!(o && !is_ok (o)))
      ok (false, "binary garbage, round %u, gets an error", round);
    json_object_put (o);
  }
  ok (true, "200 lines of binary garbage get valid error replies");
  free (line);
}

/* The tests of a backing file swap in a store with one, of
 * BACKING_BYTES, holding PAGES pages made from SEED up, and its control;
 * put_back_store() ends it.
 */
static struct store *main_store;
static struct control *main_control;
static char backing_path[64];

static void
use_backing_store (uint64_t backing_bytes, uint64_t pages, uint64_t seed)
{
  unsigned char page[CSWAP_PAGE_SIZE];
  struct store_config config = {
    .size_bytes = DEVICE_BYTES,
    .codec = { CODEC_ZSTD, codec_default_level (CODEC_ZSTD) },
    .backing_path = backing_path,
    .backing_size_bytes = backing_bytes,
  };

  snprintf (backing_path, sizeof backing_path, "/var/tmp/cswap-test-command.%d",
            (int) getpid ());
  main_store = store;
  main_control = control;
  store = store_create (&config);
  if (store == NULL)
    tap_bail_out ("store_create: %s", store_create_error ());
  control = control_create (store);
  if (control == NULL)
    tap_bail_out ("control_create: %m");
  for (uint64_t p = 0; p < pages; p++) {
    make_page (page, p + seed);
    write_page (p, page);
  }
}

static void
put_back_store (void)
{
  control_destroy (control);
  store_destroy (store);
  unlink (backing_path);
  store = main_store;
  control = main_control;
}

/* A writeback that a full backing file stops reports what it did write,
 * in its error reply's members and in its message.
 */
static void
test_writeback_stopped (void)
{
  struct store_stats stats;

  use_backing_store (4 << 20,   /* far less than the pages */
                     DEVICE_BYTES / CSWAP_PAGE_SIZE, 1000);
  json_object *o = execute ("writeback");
  store_stats (store, &stats);
  ok (is_error (o, "writeback stopped after") && get_uint (o, "batches") > 0
      && get_uint (o, "pages_written") == stats.tiered_pages
      && stats.tiered_pages > 0,
      "writeback stopped by a full file: its error reply still says it "
      "wrote %llu pages in %llu batches (%llu on disk)",
      (unsigned long long) get_uint (o, "pages_written"),
      (unsigned long long) get_uint (o, "batches"),
      (unsigned long long) stats.tiered_pages);
  json_object_put (o);
  put_back_store ();
}

/* The writeback budget: set and got as sizes, and a writeback it stops
 * says so, in its message and its counts.
 */
static void
test_writeback_budget (void)
{
  use_backing_store (64 << 20, 1024, 2000);
  expect_setting ("set writeback-limit 0", "writeback-limit", "0");
  expect_setting ("set writeback-burst 64K", "writeback-burst", "65536");
  expect_setting ("set writeback-limit 1G", "writeback-limit", "1073741824");
  json_object *o = execute ("writeback");
  ok (is_error (o, "the writeback budget is spent")
      && get_uint (o, "pages_written") > 0,
      "writeback stopped by the budget says so, after %llu pages",
      (unsigned long long) get_uint (o, "pages_written"));
  json_object_put (o);
  o = execute ("stats");
  ok (get_uint (o, "writeback_limit_bytes") == 1 << 30
      && get_uint (o, "writeback_budget_bytes") < 8192
      && get_uint (o, "writeback_budget_stops") == 1
      && get_uint (o, "written_back_bytes") <= 65536,
      "stats: the limit, %llu bytes left, 1 stop, %llu bytes written",
      (unsigned long long) get_uint (o, "writeback_budget_bytes"),
      (unsigned long long) get_uint (o, "written_back_bytes"));
  json_object_put (o);
  o = execute ("metrics");
  const char *text = json_object_get_string (get (o, "metrics"));
  ok (text && strstr (text, "\ncswap_writeback_budget_stops_total 1\n")
      && strstr (text, "\ncswap_writeback_limit_bytes 1073741824\n"),
      "metrics: the limit and the stops");
  json_object_put (o);
  put_back_store ();
}

/* A front end's command and numbers (control_extend): dispatched after
 * the built-in commands, with its argument count checked, its error
 * passed on, listed by help, and its numbers in stats and metrics.
 */
static const struct control_extension_number extension_numbers[] = {
  { "test_things", false, "Things, a gauge." },
  { "test_events", true, "Events, a counter." },
};

static unsigned extension_runs;

static int
run_test_extension (void *arg, unsigned argc, char *const *argv,
                    struct json *reply, char *error, size_t error_size)
{
  (void) arg;
  (void) reply;
  extension_runs++;
  if (argc == 1 && strcmp (argv[0], "fail") == 0) {
    snprintf (error, error_size, "asked to fail");
    return -1;
  }
  return 0;
}

static void
read_test_numbers (void *arg, uint64_t *values)
{
  (void) arg;
  values[0] = 3;
  values[1] = 41;
}

/* A second extension, of numbers only (cswap-ublk's lost pages beside
 * its ladder): its numbers after the first's, and no command of its own.
 */
static const struct control_extension_number second_numbers[] = {
  { "test_lost", true, "Lost things, a counter." },
};

static void
read_second_numbers (void *arg, uint64_t *values)
{
  values[0] = *(const uint64_t *) arg;
}

static void
test_second_extension (void)
{
  static uint64_t lost = 7;
  static const struct control_extension second = {
    .numbers = second_numbers, .number_count = 1,
    .read_numbers = read_second_numbers, .arg = &lost,
  };
  json_object *o;
  const char *text;

  control_extend (control, &second);
  o = execute ("stats");
  ok (get_uint (o, "test_things") == 3 && get_uint (o, "test_lost") == 7,
      "a second extension's numbers show beside the first's");
  json_object_put (o);
  lost = 9;
  o = execute ("metrics");
  text = json_object_get_string (get (o, "metrics"));
  ok (text && strstr (text, "cswap_test_events_total 41\n")
      && strstr (text, "\n# TYPE cswap_test_lost_total counter\n"
                 "cswap_test_lost_total 9\n"),
      "and in metrics, read anew");
  json_object_put (o);
  o = execute ("help");
  ok (json_object_array_length (get (o, "commands")) == 10,
      "one without a command adds none to help");
  json_object_put (o);
  o = execute ("testext");
  ok (is_ok (o), "and the first one's command still runs");
  json_object_put (o);
}

static void
test_extension (void)
{
  static const struct control_extension extension = {
    .command = "testext", .args = "[fail]", .help = "a test command",
    .min_args = 0, .max_args = 1, .run = run_test_extension,
    .numbers = extension_numbers, .number_count = 2,
    .read_numbers = read_test_numbers,
  };
  json_object *o;
  const char *text;

  expect_error ("testext", 7, "unknown command", "no extension yet");
  control_extend (control, &extension);
  o = execute ("testext");
  ok (is_ok (o) && extension_runs == 1, "the extension's command runs");
  json_object_put (o);
  expect_error ("testext fail", 12, "asked to fail",
                "the extension's error is the reply's");
  expect_error ("testext a b", 11, "usage: testext [fail]",
                "its argument count is checked first");
  ok (extension_runs == 2, "a wrong count does not reach it");
  o = execute ("help");
  json_object *commands = get (o, "commands");
  size_t n = commands ? json_object_array_length (commands) : 0;
  ok (n == 10 && strcmp (json_object_get_string
                           (get (json_object_array_get_idx (commands, 9),
                                 "name")), "testext") == 0,
      "help lists it after the 9 built-in commands");
  json_object_put (o);
  o = execute ("stats");
  ok (get (o, "test_things") && get_uint (o, "test_things") == 3
      && get_uint (o, "test_events") == 41, "stats shows its numbers");
  json_object_put (o);
  o = execute ("metrics");
  text = json_object_get_string (get (o, "metrics"));
  ok (text && strstr (text, "\n# TYPE cswap_test_things gauge\n"
                      "cswap_test_things 3\n")
      && strstr (text, "\n# TYPE cswap_test_events_total counter\n"
                 "cswap_test_events_total 41\n"),
      "metrics shows them, the counter as _total");
  json_object_put (o);
  test_second_extension ();
  control_extend (control, NULL);
}

/* The ctl-uid user (CONTROL_ACCESS_READ_ONLY): the commands that only
 * read are answered as root's are; those that change the daemon's state
 * are refused before they run, each with the reason (issue 53, item 1),
 * and so are an extension's forms with arguments past its listing.
 */
static void
test_read_only (void)
{
  static const char *const readers[] = {
    "stats", "classes", "get", "get codec", "metrics", "help", "testext",
  };
  static const char *const changers[] = {
    "compact", "recompress", "set codec lz4", "set pool-limit 4096",
    "writeback", "testext fail",
  };
  static const struct control_extension extension = {
    .command = "testext", .args = "[fail]", .help = "a test command",
    .min_args = 0, .max_args = 1, .run = run_test_extension,
    .read_only_max_args = 0,
  };
  unsigned runs;
  json_object *o;

  control_extend (control, &extension);
  sender = CONTROL_ACCESS_READ_ONLY;
  for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
    o = execute (readers[i]);
    ok (is_ok (o), "read-only: %s is answered", readers[i]);
    json_object_put (o);
  }
  runs = extension_runs;
  for (size_t i = 0; i < sizeof changers / sizeof changers[0]; i++)
    expect_error (changers[i], strlen (changers[i]),
                  "refused: it changes the daemon's state, which only root "
                  "may do", changers[i]);
  ok (extension_runs == runs, "a refused extension form does not reach it");
  o = execute ("get codec");
  ok (o && strcmp (json_object_get_string
                     (get (get (o, "settings"), "codec")), "zstd") == 0,
      "and the refused set changed nothing (codec still zstd)");
  json_object_put (o);
  expect_error ("set codec", 9, "usage: set KEY VALUE",
                "a wrong count is still a usage error");
  sender = CONTROL_ACCESS_ALL;
  o = execute ("help");
  json_object *commands = get (o, "commands");
  bool marked = commands != NULL;
  for (size_t i = 0; commands && i < json_object_array_length (commands);
       i++) {
    json_object *row = json_object_array_get_idx (commands, i);
    const char *name = json_object_get_string (get (row, "name"));
    bool want = strcmp (name, "compact") && strcmp (name, "recompress")
      && strcmp (name, "set") && strcmp (name, "writeback");

    marked = marked && get (row, "read_only")
      && json_object_get_boolean (get (row, "read_only")) == want;
  }
  ok (marked, "help marks each command read_only or not");
  json_object_put (o);
  control_extend (control, NULL);
}

int
main (void)
{
  struct store_config config = {
    .size_bytes = DEVICE_BYTES,
    .codec = { CODEC_ZSTD, codec_default_level (CODEC_ZSTD) },
  };

  store = store_create (&config);
  if (store == NULL)
    tap_bail_out ("store_create: %m");
  control = control_create (store);
  if (control == NULL)
    tap_bail_out ("control_create: %m");

  test_help ();
  test_stats ();
  test_classes ();
  test_compact ();
  test_recompress ();
  test_settings ();
  test_metrics ();
  test_bad_input ();
  test_writeback_stopped ();
  test_writeback_budget ();
  test_extension ();
  test_read_only ();

  control_destroy (control);
  store_destroy (store);
  return tap_done ();
}
