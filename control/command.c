/* cswap: the control commands — parse a line, run it, reply in JSON.
 *
 * Nothing here knows of sockets: the server, the unit tests and the fuzz
 * target all call control_execute().  A line is words separated by spaces
 * or tabs; the first names a command in commands[], the rest are its
 * arguments.  Every reply is one JSON object on one line, "ok" first.
 *
 * Adding a command: write a run_NAME() that appends its members to the
 * reply (or returns fail (...)) and add a row to commands[]; `help` and
 * the argument count checks come with the row, and so does who may run
 * it: a row marked READ_ONLY changes nothing and is open to the ctl-uid
 * user, a row marked CHANGES only to root (enum control_access).
 *
 * A front end adds one command of its own (control_extend, control.h):
 * dispatched after commands[], listed by help after them.
 *
 * Adding a setting for get/set (they are the store's: pool-limit, codec,
 * level, cold-codec, cold-after, and writeback's accept-threshold, writeback-batch,
 * idle-writeback, writeback-limit, writeback-burst): add a row to
 * settings[] with a get_NAME() that writes the current value as one JSON
 * member and a set_NAME() that parses the value and applies it through a
 * store_set_*() call, or returns an error and changes nothing.  A setting
 * kept by the store as an unsigned number with its own range only needs
 * a row in unsigned_settings[] too, and get_unsigned/set_unsigned.  Both
 * run under control->lock, so a set is never interleaved with another set
 * or get.  `writeback [idle=SECONDS] [max=PAGES] [huge]` is a command, not
 * a setting: run_writeback() asks the store for one writeback now.
 *
 * Lock order: common/lock-order.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "internal.h"
#include "parse.h"

/* Most words on a line, more than any command needs (`writeback` with
 * each of its arguments has four): a longer line is refused.
 */
#define MAX_WORDS 8
/* Most bytes of a client's input quoted back in an error. */
#define MAX_QUOTED 64

struct request {
  struct control *control;
  struct json *reply;
  unsigned argc;                /* arguments, the command name excluded */
  char **argv;
  const struct control_extension *extension;  /* whose command it is */
  char error[256];
  /* A writeback stopped by an error: what it wrote first, which its
   * error reply still reports.
   */
  bool writeback_stopped;
  struct store_writeback_result stopped;
};

__attribute__ ((format (printf, 2, 3)))
static int
fail (struct request *r, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (r->error, sizeof r->error, fmt, ap);
  va_end (ap);
  return -1;
}

/* Settings. */

struct setting {
  const char *key;
  const char *values;           /* what set takes, for help */
  void (*get) (struct control *control, struct json *j, const char *key);
  /* Returns 0, or -1 with *WHY set and nothing changed. */
  int (*set) (struct control *control, const char *key, const char *value,
              const char **why);
  const char *help;
};

static void
get_pool_limit (struct control *control, struct json *j, const char *key)
{
  struct store_stats stats;

  store_stats (control->store, &stats);
  json_uint (j, key, stats.pool_limit_bytes);
}

static int
set_pool_limit (struct control *control, const char *key,
                const char *value, const char **why)
{
  uint64_t bytes;

  (void) key;
  if (parse_pool_limit (value, &bytes, why) == -1)
    return -1;
  if (store_set_pool_limit (control->store, bytes) != 0) {
    *why = "the store refused the limit";
    return -1;
  }
  return 0;
}

static void
get_codec (struct control *control, struct json *j, const char *key)
{
  struct codec_config codec;

  store_get_codec (control->store, &codec);
  json_string (j, key, codec_name (codec.id));
}

/* A new codec starts at its default level, as codec= does without
 * level=: the old codec's level may mean nothing to the new one.
 */
static int
set_codec (struct control *control, const char *key,
           const char *value, const char **why)
{
  struct codec_config codec;
  enum codec_id id;

  (void) key;
  if (codec_id_parse (value, &id) == -1) {
    *why = "unknown codec (use lz4 or zstd)";
    return -1;
  }
  store_get_codec (control->store, &codec);
  if (codec.id == id)
    return 0;
  codec = (struct codec_config) { id, codec_default_level (id) };
  if (store_set_codec (control->store, &codec) != 0) {
    *why = "the store refused the codec";
    return -1;
  }
  return 0;
}

/* cold-codec and cold-after: the two halves of recompression, set one at
 * a time, the other kept.
 */
static void
get_recompress (struct control *control, struct json *j, const char *key)
{
  struct store_recompress r;

  store_get_recompress (control->store, &r);
  if (strcmp (key, "cold-codec") == 0)
    json_string (j, key, store_recompress_codec_name (&r));
  else
    json_uint (j, key, r.after_s);
}

static int
set_recompress (struct control *control, const char *key,
                const char *value, const char **why)
{
  struct store_recompress r;
  int64_t seconds;

  store_get_recompress (control->store, &r);
  if (strcmp (key, "cold-codec") == 0) {
    if (store_recompress_parse_codec (value, &r) == -1) {
      *why = "unknown cold codec (use none or zstd)";
      return -1;
    }
  }
  else if (parse_int64 (value, 1, STORE_MAX_COLD_AFTER_S, &seconds, why) == -1)
    return -1;
  else
    r.after_s = seconds;
  if (store_set_recompress (control->store, &r) != 0) {
    *why = "the store refused the value";
    return -1;
  }
  return 0;
}

static void
get_level (struct control *control, struct json *j, const char *key)
{
  struct codec_config codec;

  store_get_codec (control->store, &codec);
  json_int (j, key, codec.level);
}

static int
set_level (struct control *control, const char *key,
           const char *value, const char **why)
{
  static char range[64];
  struct codec_config codec;
  int64_t level;
  int min, max;

  (void) key;
  if (parse_int64 (value, -1000, 1000, &level, why) == -1)
    return -1;
  store_get_codec (control->store, &codec);
  if (codec_check_level (codec.id, level, &min, &max)) {
    if (min == max)
      snprintf (range, sizeof range, "%s takes no level",
                codec_name (codec.id));
    else
      snprintf (range, sizeof range, "%s levels are %d..%d",
                codec_name (codec.id), min, max);
    *why = range;
    return -1;
  }
  codec.level = level;
  if (store_set_codec (control->store, &codec) != 0) {
    *why = "the store refused the level";
    return -1;
  }
  return 0;
}

/* A setting kept as an unsigned number by the store, with the store's
 * own range check: three of writeback's.
 */
struct unsigned_setting {
  const char *key;
  int64_t min, max;
  unsigned (*get) (struct store *store);
  int (*set) (struct store *store, unsigned value);
};

static const struct unsigned_setting unsigned_settings[] = {
  { "accept-threshold", 1, 100, store_get_accept_threshold,
    store_set_accept_threshold },
  { "writeback-batch", 1, STORE_MAX_WRITEBACK_BATCH,
    store_get_writeback_batch, store_set_writeback_batch },
  { "idle-writeback", 0, STORE_MAX_IDLE_WRITEBACK_S, store_get_idle_writeback,
    store_set_idle_writeback },
};

static const struct unsigned_setting *
find_unsigned_setting (const char *key)
{
  for (size_t i = 0; i < sizeof unsigned_settings / sizeof unsigned_settings[0]; i++)
    if (strcmp (unsigned_settings[i].key, key) == 0)
      return &unsigned_settings[i];
  abort ();                     /* settings[] names only keys listed here */
}

static void
get_unsigned (struct control *control, struct json *j, const char *key)
{
  json_uint (j, key, find_unsigned_setting (key)->get (control->store));
}

static int
set_unsigned (struct control *control, const char *key, const char *value,
              const char **why)
{
  const struct unsigned_setting *u = find_unsigned_setting (key);
  int64_t number;

  if (parse_int64 (value, u->min, u->max, &number, why) == -1)
    return -1;
  if (u->set (control->store, number) != 0) {
    *why = "the store refused the value";
    return -1;
  }
  return 0;
}

/* writeback-limit and writeback-burst: the two halves of the budget,
 * sizes, each 0 or STORE_MIN_WRITEBACK_BUDGET_BYTES up; get shows them as
 * set (a burst of 0 is a day's limit).
 */
static uint64_t *
budget_half (struct store_writeback_budget *budget, const char *key)
{
  return strcmp (key, "writeback-limit") == 0 ? &budget->limit_bytes_per_day
    : &budget->burst_bytes;
}

static void
get_writeback_budget (struct control *control, struct json *j,
                      const char *key)
{
  struct store_writeback_budget budget;

  store_get_writeback_budget (control->store, &budget);
  json_uint (j, key, *budget_half (&budget, key));
}

static int
set_writeback_budget (struct control *control, const char *key,
                      const char *value, const char **why)
{
  struct store_writeback_budget budget;
  uint64_t bytes;

  if (parse_size_or_zero (value, STORE_MIN_WRITEBACK_BUDGET_BYTES,
                          STORE_MAX_WRITEBACK_BUDGET_BYTES, &bytes, why) == -1)
    return -1;
  store_get_writeback_budget (control->store, &budget);
  *budget_half (&budget, key) = bytes;
  if (store_set_writeback_budget (control->store, &budget) != 0) {
    *why = "the store refused the value";
    return -1;
  }
  return 0;
}

static const struct setting settings[] = {
  { "pool-limit", "SIZE|N%", get_pool_limit, set_pool_limit,
    "most pool memory in bytes, 0 for none, else 4096 up; N% of physical "
    "memory" },
  { "codec", "lz4|zstd", get_codec, set_codec,
    "codec for pages written from now on (its default level)" },
  { "level", "N", get_level, set_level, "the codec's level" },
  { "cold-codec", "none|zstd", get_recompress, set_recompress,
    "codec pages get again once they stay untouched (its default level)" },
  { "cold-after", "SECONDS", get_recompress, set_recompress,
    "seconds between the recompressor's passes (1..30 days)" },
  { "accept-threshold", "PERCENT", get_unsigned, set_unsigned,
    "writeback stops below this % of the pool limit (1..100)" },
  { "writeback-batch", "PAGES", get_unsigned, set_unsigned,
    "pages per io_uring submission (1..256)" },
  { "idle-writeback", "SECONDS", get_unsigned, set_unsigned,
    "write back pages idle this long, 0 for never (at most 30 days)" },
  { "writeback-limit", "SIZE", get_writeback_budget, set_writeback_budget,
    "most bytes written back a day, 0 for no limit, else 8K..128T" },
  { "writeback-burst", "SIZE", get_writeback_budget, set_writeback_budget,
    "most of them at once, 0 for a day's limit, else 8K..128T" },
};

static const struct setting *
find_setting (const char *key)
{
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
    if (strcmp (settings[i].key, key) == 0)
      return &settings[i];
  return NULL;
}

/* Commands. */

static int
run_stats (struct request *r)
{
  struct control_snapshot s;

  control_snapshot (r->control, &s);
  json_string (r->reply, "version", CSWAP_VERSION);
  json_object_begin (r->reply, "options");
  json_uint (r->reply, "size_bytes", s.store.size_bytes);
  json_string (r->reply, "codec", codec_name (s.codec.id));
  json_int (r->reply, "level", s.codec.level);
  json_object_end (r->reply);
  control_stats_json (r->reply, &s);
  return 0;
}

static int
run_classes (struct request *r)
{
  struct zs_pool *pool = store_pool (r->control->store);
  unsigned count = zs_class_count (pool);
  struct json *j = r->reply;

  json_array_begin (j, "classes");
  for (unsigned i = 0; i < count; i++) {
    struct zs_class_stats c;

    zs_class_stats (pool, i, &c);
    json_object_begin (j, NULL);
    json_uint (j, "index", i);
    json_uint (j, "size", c.size);
    json_uint (j, "pages_per_zspage", c.pages_per_zspage);
    json_uint (j, "objects_per_zspage", c.objects_per_zspage);
    json_bool (j, "huge", c.huge);
    json_array_begin (j, "zspages");
    for (unsigned g = 0; g < ZS_FULLNESS_GROUPS; g++)
      json_uint (j, NULL, c.zspages[g]);
    json_array_end (j);
    json_uint (j, "objects_allocated", c.objects_allocated);
    json_uint (j, "objects_used", c.objects_used);
    json_uint (j, "pages_used", c.pages_used);
    json_uint (j, "pages_freeable", c.pages_freeable);
    json_object_end (j);
  }
  json_array_end (j);
  return 0;
}

/* Runs on the caller's thread (the server's): compaction's critical
 * sections are bounded, so the data path goes on meanwhile, but other
 * control clients wait for it.
 */
static int
run_compact (struct request *r)
{
  struct zs_compact_result result = { 0 };
  int e = store_compact (r->control->store, &result);

  if (e == -EBUSY)
    return fail (r, "compaction already running");
  if (e < 0)
    return fail (r, "compaction failed: %s", strerror (-e));
  json_uint (r->reply, "pages_freed", result.pages_freed);
  json_uint (r->reply, "objects_moved", result.objects_moved);
  return 0;
}

static int
run_recompress (struct request *r)
{
  uint64_t pages;

  if (store_recompress_now (r->control->store, &pages) == -EINVAL)
    return fail (r, "no cold codec (set cold-codec first)");
  json_uint (r->reply, "pages_recompressed", pages);
  return 0;
}

static int
run_get (struct request *r)
{
  const struct setting *one = NULL;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&r->control->lock);

  if (r->argc == 1 && (one = find_setting (r->argv[0])) == NULL)
    return fail (r, "unknown key '%.*s' (see help)", MAX_QUOTED, r->argv[0]);
  json_object_begin (r->reply, "settings");
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
    if (one == NULL || one == &settings[i])
      settings[i].get (r->control, r->reply, settings[i].key);
  json_object_end (r->reply);
  return 0;
}

static int
run_set (struct request *r)
{
  const struct setting *setting = find_setting (r->argv[0]);
  const char *why = NULL;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&r->control->lock);

  if (setting == NULL)
    return fail (r, "unknown key '%.*s' (see help)", MAX_QUOTED, r->argv[0]);
  if (setting->set (r->control, setting->key, r->argv[1], &why) == -1)
    return fail (r, "%s %.*s: %s", setting->key, MAX_QUOTED, r->argv[1], why);
  json_object_begin (r->reply, "settings");
  setting->get (r->control, r->reply, setting->key);
  json_object_end (r->reply);
  return 0;
}

static void
writeback_members (struct json *j, const struct store_writeback_result *result)
{
  json_uint (j, "pages_written", result->pages_written);
  json_uint (j, "batches", result->batches);
}

/* writeback [idle=SECONDS] [max=PAGES] [huge] */
static int
run_writeback (struct request *r)
{
  struct store_writeback_result result = { 0 };
  int64_t idle_seconds = 0, max_pages = 0;
  bool huge = false;
  const char *why;
  int err;

  for (unsigned i = 0; i < r->argc; i++) {
    const char *arg = r->argv[i];

    if (strcmp (arg, "huge") == 0)
      huge = true;
    else if (strncmp (arg, "idle=", 5) == 0) {
      if (parse_int64 (arg + 5, 0, STORE_MAX_IDLE_WRITEBACK_S, &idle_seconds,
                       &why) == -1)
        return fail (r, "idle=: %s", why);
    }
    else if (strncmp (arg, "max=", 4) == 0) {
      if (parse_int64 (arg + 4, 0, INT64_MAX, &max_pages, &why) == -1)
        return fail (r, "max=: %s", why);
    }
    else
      return fail (r, "writeback: unknown argument (use idle=SECONDS, "
                   "max=PAGES, huge)");
  }
  err = store_writeback (r->control->store, idle_seconds, max_pages, huge,
                         &result);
  if (err == -ENODEV)
    return fail (r, "no backing file configured");
  if (err) {
    r->writeback_stopped = true;
    r->stopped = result;
    return fail (r, "writeback stopped after %llu pages: %s (pages not "
                 "written stay in memory)",
                 (unsigned long long) result.pages_written,
                 err == -EDQUOT ? "the writeback budget is spent"
                 : strerror (-err));
  }
  writeback_members (r->reply, &result);
  return 0;
}

static int
run_metrics (struct request *r)
{
  struct control_snapshot s;
  CLEANUP_FREE char *text = NULL;

  control_snapshot (r->control, &s);
  text = control_metrics_text (&s);
  if (text == NULL)
    return fail (r, "out of memory");
  json_string (r->reply, "metrics", text);
  return 0;
}

static int run_help (struct request *r);

/* READ_ONLY: the command changes nothing, so the ctl-uid user may run
 * it (control.h, enum control_access).
 */
enum { CHANGES = false, READ_ONLY = true };

struct command {
  const char *name;
  const char *args;             /* for help */
  unsigned min_args, max_args;
  bool read_only;
  int (*run) (struct request *r);
  const char *help;
};

static const struct command commands[] = {
  { "stats", "", 0, 0, READ_ONLY, run_stats,
    "the store's and allocator's counters, options, uptime" },
  { "classes", "", 0, 0, READ_ONLY, run_classes,
    "the allocator's per-class table" },
  { "compact", "", 0, 0, CHANGES, run_compact, "compact the allocator now" },
  { "recompress", "", 0, 0, CHANGES, run_recompress,
    "one recompression pass now: pages untouched since the last get the cold codec" },
  { "get", "[KEY]", 0, 1, READ_ONLY, run_get, "one setting, or all of them" },
  { "set", "KEY VALUE", 2, 2, CHANGES, run_set, "change a setting" },
  { "writeback", "[ARGS]", 0, MAX_WORDS - 1, CHANGES, run_writeback,
    "write idle pages back to the backing file" },
  { "metrics", "", 0, 0, READ_ONLY, run_metrics,
    "the counters in Prometheus text format, in the member \"metrics\"" },
  { "help", "", 0, 0, READ_ONLY, run_help, "this list" },
};

static void
help_row (struct json *j, const char *name, const char *args,
          const char *help, bool read_only)
{
  json_object_begin (j, NULL);
  json_string (j, "name", name);
  json_string (j, "args", args);
  json_string (j, "help", help);
  json_bool (j, "read_only", read_only);
  json_object_end (j);
}

static int
run_help (struct request *r)
{
  const struct control *control = r->control;
  struct json *j = r->reply;

  json_array_begin (j, "commands");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    help_row (j, commands[i].name, commands[i].args, commands[i].help,
              commands[i].read_only);
  /* Its bare form (a listing) only: the rest depends on the arguments. */
  for (unsigned i = 0; i < control->extension_count; i++) {
    const struct control_extension *e = control->extensions[i];

    if (e->command)
      help_row (j, e->command, e->args, e->help, true);
  }
  json_array_end (j);
  json_array_begin (j, "settings");
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
    json_object_begin (j, NULL);
    json_string (j, "key", settings[i].key);
    json_string (j, "values", settings[i].values);
    json_string (j, "help", settings[i].help);
    json_object_end (j);
  }
  json_array_end (j);
  return 0;
}

/* Splits LINE (LEN bytes, copied into BUFFER) into WORDS.  Returns the
 * number of words, or -1 with the request's error set.
 */
static int
split_words (struct request *r, const char *line, size_t len, char *buffer,
             char *words[MAX_WORDS])
{
  int count = 0;

  if (len > CONTROL_LINE_MAX)
    return fail (r, "line too long (the limit is %d bytes)", CONTROL_LINE_MAX);
  if (len > 0 && line[len - 1] == '\r')  /* from telnet and friends */
    len--;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char) line[i] < 0x20 && line[i] != '\t')
      return fail (r, "control character 0x%02x in the line",
                   (unsigned char) line[i]);
  memcpy (buffer, line, len);
  buffer[len] = '\0';
  for (char *save = NULL, *word = strtok_r (buffer, " \t", &save); word;
       word = strtok_r (NULL, " \t", &save)) {
    if (count == MAX_WORDS)
      return fail (r, "too many words on the line");
    words[count++] = word;
  }
  return count;
}

/* The front end's command: run by its own function, with the request's
 * reply and error buffer.
 */
static int
run_extension (struct request *r)
{
  const struct control_extension *e = r->extension;

  r->error[0] = '\0';
  if (e->run (e->arg, r->argc, r->argv, r->reply, r->error,
              sizeof r->error) == 0)
    return 0;
  if (r->error[0] == '\0')
    return fail (r, "%s failed", e->command);
  return -1;
}

static int
dispatch (struct request *r, enum control_access access, const char *line,
          size_t len)
{
  char buffer[CONTROL_LINE_MAX + 1];
  char *words[MAX_WORDS];
  int count = split_words (r, line, len, buffer, words);
  const struct command *c = NULL;
  struct command extension_command;

  if (count == -1)
    return -1;
  if (count == 0)
    return fail (r, "empty line (try help)");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (commands[i].name, words[0]) == 0)
      c = &commands[i];
  for (unsigned i = 0; c == NULL && i < r->control->extension_count; i++) {
    const struct control_extension *e = r->control->extensions[i];

    if (e->command == NULL || strcmp (e->command, words[0]) != 0)
      continue;
    extension_command = (struct command) {
      e->command, e->args, e->min_args, e->max_args,
      (unsigned) count - 1 <= e->read_only_max_args, run_extension, e->help,
    };
    c = &extension_command;
    r->extension = e;
  }
  if (c == NULL)
    return fail (r, "unknown command '%.*s' (try help)", MAX_QUOTED,
                 words[0]);
  r->argc = count - 1;
  r->argv = words + 1;
  if (r->argc < c->min_args || r->argc > c->max_args)
    return fail (r, "usage: %s%s%s", c->name, *c->args ? " " : "", c->args);
  if (access != CONTROL_ACCESS_ALL && !c->read_only)
    return fail (r, "%s%s%.*s: refused: it changes the daemon's state, "
                 "which only root may do (the ctl-uid user may run the "
                 "commands that only read: see help)", c->name,
                 r->argc ? " " : "", MAX_QUOTED, r->argc ? r->argv[0] : "");
  return c->run (r);
}

/* {"ok":false,"error":ERROR}, with a stopped writeback's counts. */
static char *
error_reply (const char *error, const struct store_writeback_result *stopped,
             size_t *reply_len)
{
  struct json j;

  json_init (&j, CONTROL_REPLY_MAX);
  json_object_begin (&j, NULL);
  json_bool (&j, "ok", false);
  json_string (&j, "error", error);
  if (stopped)
    writeback_members (&j, stopped);
  json_object_end (&j);
  return json_finish (&j, reply_len);
}

char *
control_error_reply (const char *error, size_t *reply_len)
{
  return error_reply (error, NULL, reply_len);
}

char *
control_execute (struct control *control, enum control_access access,
                 const char *line, size_t len, size_t *reply_len)
{
  struct json j;
  struct request r = { .control = control, .reply = &j };
  char *reply;

  json_init (&j, CONTROL_REPLY_MAX);
  json_object_begin (&j, NULL);
  json_bool (&j, "ok", true);
  if (dispatch (&r, access, line, len) == -1) {
    json_free (&j);
    return error_reply (r.error, r.writeback_stopped ? &r.stopped : NULL,
                        reply_len);
  }
  json_object_end (&j);
  reply = json_finish (&j, reply_len);
  return reply ? reply
               : control_error_reply ("reply too large or out of memory",
                                      reply_len);
}

struct control *
control_create (struct store *store)
{
  struct control *control = calloc (1, sizeof *control);

  if (control == NULL)
    return NULL;
  control->store = store;
  pthread_mutex_init (&control->lock, NULL);
  clock_gettime (CLOCK_MONOTONIC, &control->started);
  return control;
}

void
control_extend (struct control *control,
                const struct control_extension *extension)
{
  if (extension == NULL) {
    control->extension_count = 0;
    return;
  }
  if (control->extension_count == CONTROL_MAX_EXTENSIONS) {
    fprintf (stderr, "control: more than %d extensions\n",
             CONTROL_MAX_EXTENSIONS);
    abort ();
  }
  control->extensions[control->extension_count++] = extension;
}

void
control_destroy (struct control *control)
{
  if (control) {
    pthread_mutex_destroy (&control->lock);
    free (control);
  }
}
