/* cswapctl: the device listing, one row per daemon, as zramctl's.
 *
 * Every column is a row of columns[]: its name, its kind (how a value
 * prints), the `stats` member it shows or a function that works it out,
 * and its meaning, which --output help and cswapctl(8) show.  Names are
 * zramctl's where the meaning is the same (DATA, COMPR, TOTAL, MEM-USED,
 * MIGRATED ...), cswap's own otherwise.  The columns come in the order
 * --output-all prints them, memory first; the default ones are marked.
 *
 * Memory first, and unmistakable: MEM-NOW is what the daemon holds in
 * RAM now, everything included; TOTAL what its pages take now; MEM-USED
 * keeps zramctl's meaning, a peak, which is the figure zram users take
 * for "now".
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cswapctl.h"

enum kind {
  TEXT,
  SIZE,                         /* bytes: "1.2G", exact with --bytes */
  COUNT,
  RATIO,
  DURATION,                     /* seconds: "2h05m", exact with --bytes */
};

/* When a cell has no value and prints "-". */
enum none {
  ALWAYS_SET,
  NONE_WHEN_ZERO,               /* the pool limit: 0 is none */
  NONE_WITHOUT_BACKING,         /* the daemon has no backing file */
};

struct value {
  bool none;
  uint64_t number;              /* SIZE, COUNT */
  double real;                  /* RATIO, DURATION */
  char text[PATH_MAX];          /* TEXT */
};

struct column {
  const char *name;
  enum kind kind;
  bool shown;                   /* by default */
  enum none none;
  const char *member;           /* the stats member it shows, or NULL: */
  void (*value) (const struct target *t, struct value *v);
  const char *help;
};

static void
name_value (const struct target *t, struct value *v)
{
  snprintf (v->text, sizeof v->text, "%s", target_name (t));
}

static void
socket_value (const struct target *t, struct value *v)
{
  snprintf (v->text, sizeof v->text, "%s", t->socket_path);
}

static void
algorithm_value (const struct target *t, struct value *v)
{
  json_object *options = member (t->reply, "options");

  snprintf (v->text, sizeof v->text, "%s-%lld",
            json_object_get_string (member (options, "codec")),
            (long long) json_object_get_int64 (member (options, "level")));
}

static void
mem_used_value (const struct target *t, struct value *v)
{
  v->number = stats_memory_peak (t->reply);
}

static void
on_disk_value (const struct target *t, struct value *v)
{
  v->number = stats_on_disk (t->reply);
}

static void
stale_value (const struct target *t, struct value *v)
{
  v->number = stats_stale (t->reply);
}

static void
errors_value (const struct target *t, struct value *v)
{
  v->number = member_uint (t->reply, "failed_writes")
              + member_uint (t->reply, "read_errors");
}

static void
disk_errors_value (const struct target *t, struct value *v)
{
  v->number = member_uint (t->reply, "backing_io_errors")
              + member_uint (t->reply, "backing_enospc_errors")
              + member_uint (t->reply, "backing_checksum_errors");
}

static void
swap_used_value (const struct target *t, struct value *v)
{
  uint64_t size_bytes;

  v->none = !device_swap_use (t, &v->number, &size_bytes);
}

static const struct column columns[] = {
  { "NAME", TEXT, true, ALWAYS_SET, NULL, name_value,
    "the swap device the cswap service recorded, else the socket" },
  { "MEM-NOW", SIZE, true, ALWAYS_SET, "process_rss_bytes", NULL,
    "RAM the daemon holds now, everything included (its VmRSS)" },
  { "TOTAL", SIZE, true, ALWAYS_SET, "memory_used_bytes", NULL,
    "RAM the stored pages take now: POOL and META" },
  { "MEM-USED", SIZE, false, ALWAYS_SET, NULL, mem_used_value,
    "the peak of TOTAL, not now (as zramctl's MEM-USED)" },
  { "MEM-LIMIT", SIZE, false, NONE_WHEN_ZERO, "pool_limit_bytes", NULL,
    "the most RAM the pool may hold (pool-limit)" },
  { "POOL", SIZE, false, ALWAYS_SET, "pool_bytes", NULL,
    "RAM the allocator holds for pages now" },
  { "META", SIZE, false, ALWAYS_SET, "metadata_bytes", NULL,
    "RAM for the slot table and the allocator's metadata now" },
  { "DATA", SIZE, true, ALWAYS_SET, "original_bytes", NULL,
    "data stored, uncompressed, in RAM and on disk" },
  { "COMPR", SIZE, true, ALWAYS_SET, "compressed_bytes", NULL,
    "the stored data's compressed size" },
  { "COMP-RATIO", RATIO, true, ALWAYS_SET, "effective_ratio", NULL,
    "DATA / TOTAL: the data's size over the RAM it takes" },
  { "ON-DISK", SIZE, true, NONE_WITHOUT_BACKING, NULL, on_disk_value,
    "the part of DATA on the backing file, uncompressed" },
  { "ALGORITHM", TEXT, true, ALWAYS_SET, NULL, algorithm_value,
    "codec and level for new pages" },
  { "DISKSIZE", SIZE, true, ALWAYS_SET, "size_bytes", NULL,
    "the device's size" },
  { "SWAP-USED", SIZE, false, ALWAYS_SET, NULL, swap_used_value,
    "the kernel's swap in use on NAME, from /proc/swaps" },
  { "PAGES", COUNT, false, ALWAYS_SET, "pages_stored", NULL,
    "pages stored" },
  { "ZERO-PAGES", COUNT, false, ALWAYS_SET, "same_filled_pages", NULL,
    "pages of one repeated value, kept with no memory allocated" },
  { "HUGE", COUNT, false, ALWAYS_SET, "huge_pages", NULL,
    "pages kept uncompressed: they did not compress" },
  { "BACKING", SIZE, false, NONE_WITHOUT_BACKING, "backing_size_bytes", NULL,
    "the backing file's size" },
  { "DISK-USED", SIZE, false, NONE_WITHOUT_BACKING, "backing_used_bytes", NULL,
    "backing file space in use, STALE included" },
  { "STALE", SIZE, false, NONE_WITHOUT_BACKING, NULL, stale_value,
    "backing file space of pages since freed, not yet reclaimed" },
  { "WRITTEN-BACK", COUNT, false, NONE_WITHOUT_BACKING, "written_back_pages",
    NULL, "pages moved to the backing file since the start" },
  { "MIGRATED", COUNT, false, ALWAYS_SET, "pages_compacted", NULL,
    "pages freed by compaction (zram's pages_compacted)" },
  { "LIMIT-HITS", COUNT, false, ALWAYS_SET, "pool_limit_hits", NULL,
    "writes that found the pool at its limit" },
  { "ERRORS", COUNT, false, ALWAYS_SET, NULL, errors_value,
    "pages the kernel could not write or read back" },
  { "DISK-ERRORS", COUNT, false, NONE_WITHOUT_BACKING, NULL,
    disk_errors_value, "backing file I/O, full and checksum errors" },
  { "UPTIME", DURATION, false, ALWAYS_SET, "uptime_seconds", NULL,
    "time since the daemon started" },
  { "SOCKET", TEXT, false, ALWAYS_SET, NULL, socket_value,
    "the control socket" },
};

#define COLUMN_COUNT (sizeof columns / sizeof columns[0])
_Static_assert (COLUMN_COUNT <= COLUMNS_MAX, "a column list holds them all");

void
columns_default (struct column_list *list)
{
  list->count = 0;
  for (unsigned i = 0; i < COLUMN_COUNT; i++)
    if (columns[i].shown)
      list->id[list->count++] = i;
}

void
columns_all (struct column_list *list)
{
  list->count = COLUMN_COUNT;
  for (unsigned i = 0; i < COLUMN_COUNT; i++)
    list->id[i] = i;
}

__attribute__ ((noreturn))
static void
unknown_column (const char *name, size_t len)
{
  char valid[COLUMN_COUNT * 16] = "";

  for (size_t i = 0; i < COLUMN_COUNT; i++) {
    if (i > 0)
      strcat (valid, ",");
    strcat (valid, columns[i].name);
  }
  die (EXIT_USAGE, "unknown column '%.*s' (valid: %s; see --output help)",
       (int) len, name, valid);
}

void
columns_parse (const char *text, struct column_list *list)
{
  list->count = 0;
  if (*text == '+') {
    columns_default (list);
    text++;
  }
  for (;;) {
    size_t len = strcspn (text, ",");
    size_t i = 0;

    while (i < COLUMN_COUNT && (strlen (columns[i].name) != len
                                || strncasecmp (columns[i].name, text, len)))
      i++;
    if (i == COLUMN_COUNT)
      unknown_column (text, len);
    if (list->count == COLUMNS_MAX)
      die (EXIT_USAGE, "--output: more than %d columns", COLUMNS_MAX);
    list->id[list->count++] = i;
    if (text[len] == '\0')
      return;
    text += len + 1;
  }
}

void
columns_help (FILE *f)
{
  fprintf (f, "Columns of the device listing (* the default ones):\n");
  for (size_t i = 0; i < COLUMN_COUNT; i++)
    fprintf (f, "  %-12s %c %s\n", columns[i].name,
             columns[i].shown ? '*' : ' ', columns[i].help);
}

static void
column_value (const struct column *c, const struct target *t, struct value *v)
{
  *v = (struct value) { 0 };
  if (c->value)
    c->value (t, v);
  else if (c->kind == RATIO || c->kind == DURATION)
    v->real = member_double (t->reply, c->member);
  else
    v->number = member_uint (t->reply, c->member);
  if (c->none == NONE_WHEN_ZERO && v->number == 0)
    v->none = true;
  if (c->none == NONE_WITHOUT_BACKING
      && member_uint (t->reply, "backing_size_bytes") == 0)
    v->none = true;
}

static void
add_cell (struct table *table, const struct column *c, const struct value *v,
          bool bytes)
{
  char text[SIZE_TEXT_MAX];

  if (v->none) {
    table_cell (table, "-");
    return;
  }
  switch (c->kind) {
  case TEXT:
    table_cell (table, "%s", v->text);
    break;
  case SIZE:
    format_size (text, v->number, bytes ? SIZE_BYTES : SIZE_SHORT);
    table_cell (table, "%s", text);
    break;
  case COUNT:
    table_cell (table, "%llu", (unsigned long long) v->number);
    break;
  case RATIO:
    table_cell (table, "%.2f", v->real);
    break;
  case DURATION:
    if (bytes)
      table_cell (table, "%.0f", v->real);
    else {
      format_duration (text, v->real);
      table_cell (table, "%s", text);
    }
    break;
  }
}

void
print_listing (const struct target *targets, size_t count,
               const struct listing_style *style)
{
  const struct column_list *list = style->columns;
  struct table_column headers[COLUMNS_MAX];
  struct table table;
  struct value value;

  for (size_t i = 0; i < list->count; i++)
    headers[i] = (struct table_column) {
      columns[list->id[i]].name, columns[list->id[i]].kind == TEXT
    };
  table_init (&table, headers, list->count);
  for (size_t t = 0; t < count; t++)
    for (size_t i = 0; i < list->count; i++) {
      const struct column *c = &columns[list->id[i]];

      column_value (c, &targets[t], &value);
      add_cell (&table, c, &value, style->bytes);
    }
  table_print (&table, &style->table);
}
