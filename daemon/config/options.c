/* cswap: parsing and checking the device options (see options.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "options-help.h"
#include "options.h"
#include "page.h"
#include "parse.h"
#include "zsmalloc.h"

/* The default codec is zstd level 1, a measured choice (doc/design.md):
 * on the corpus it keeps pages in about half the memory lz4 needs.  Under
 * load lz4 swaps faster, but at more memory than zram itself.
 */
#define DEFAULT_CODEC CODEC_ZSTD

/* zram-generator's default zram-size: half the memory, at most 4 GiB. */
const char options_default_size[] = "min(ram / 2, 4096)";

/* Enough warm pages for a few hundred new zspages, so that a burst of
 * swap-outs does not wait on the kernel while the refill thread catches
 * up: 8 MiB, but no more than 1/64 of the RAM.  On a 160 MiB machine
 * (107 MiB of it for the kernel to give) 8 MiB of warm pages was memory
 * that decided whether a program finished (doc/design.md, "The smallest
 * machine"); and in bench/store 1 MiB kept up as well as 8.
 */
const char options_default_reserve[] = "min(ram / 64, 8)";

/* With a backing file and no pool-limit=, the pool is held to a fifth of
 * the RAM, zswap's max_pool_percent: past it cold pages go to the file
 * (writeback-room.c) instead of the pool growing until the machine is
 * out of memory with an empty file beside it (issue 63: a 256 MiB VM
 * OOM-killed, the pool at 156 MiB, 0 bytes written).  zswap's figure, so
 * that the two hold the same memory for the same work, and 80% of the RAM
 * stays with the programs.  Without a backing file there is no default:
 * a limit then only refuses writes.
 */
const char options_default_pool_limit[] = "ram / 5";

/* With a backing file and no writeback-limit=, 16 GiB a day may be
 * written to it.  A consumer SSD is rated for about 0.3 drive writes a day
 * over its 5-year warranty: 150 TBW for 250 GB, 300 for 500 GB, 600 for
 * 1 TB, so 82 to 330 GB a day.  16 GiB is a tenth of that on the 500 GB
 * drive, a fifth on the 250 GB one: swap stays a small share of the wear,
 * and a machine thrashing at disk speed (100 MB/s is 8.6 TB a day, a
 * 300 TBW drive's whole life in five weeks) is stopped after a day's
 * share.  Ordinary swapping never meets it: the bucket starts full, and
 * in issue 63's 256 MiB VM, 2.5 times its RAM through swap, zswap wrote
 * 550 MiB to its swap file and zram 910 MiB to its writeback device.  Spent, writeback stops and a full pool
 * refuses writes, as without a backing file (writeback-budget.c).
 */
const char options_default_writeback_limit[] = "16G";

const char options_help[] = CSWAP_OPTIONS_HELP;

void
options_print_help (void)
{
  for (const char *line = options_help; *line; ) {
    int len = strcspn (line, "\n");

    /* A line that goes on with the option above has no key. */
    printf ("    %s%.*s\n", line[0] == ' ' ? "  " : "--", len, line);
    line += len + (line[len] == '\n');
  }
}

static char why_buffer[256];

static const char *
explain (const char *key, const char *value, const char *why)
{
  snprintf (why_buffer, sizeof why_buffer, "%s=%s: %s", key, value, why);
  return why_buffer;
}

/* size=: the parsed size, page-aligned and within what the store can
 * address, or *REASON.
 */
static void
set_size (struct store_config *c, const char *value, const char **reason)
{
  static char too_large[96];

  if (parse_memory_size (value, &c->size_bytes, reason) == -1)
    return;
  if (c->size_bytes == 0 || c->size_bytes % CSWAP_PAGE_SIZE)
    *reason = "the size must be a non-zero multiple of 4096 bytes";
  else if (c->size_bytes / CSWAP_PAGE_SIZE > ZS_MAX_OWNER_COOKIE) {
    snprintf (too_large, sizeof too_large,
              "%" PRIu64 " GiB: more than cswap can address (less than 8 TiB)",
              c->size_bytes >> 30);
    *reason = too_large;
  }
}

void
options_init (struct cswap_options *options)
{
  *options = (struct cswap_options) {
    .store.codec = { DEFAULT_CODEC, codec_default_level (DEFAULT_CODEC) },
    .ctl.allowed_uid = -1,
    .lock_memory = true,
  };
}

int
options_set (struct cswap_options *options, const char *key,
             const char *value, const char **why)
{
  struct store_config *c = &options->store;
  const char *reason = NULL;
  int64_t number;

  if (strcmp (key, "size") == 0)
    set_size (c, value, &reason);
  else if (strcmp (key, "codec") == 0) {
    if (codec_id_parse (value, &c->codec.id) == -1)
      reason = "unknown codec (use lz4 or zstd)";
    else if (!options->level_given)
      c->codec.level = codec_default_level (c->codec.id);
  }
  else if (strcmp (key, "cold-codec") == 0) {
    if (store_recompress_parse_codec (value, &c->recompress) == -1)
      reason = "unknown cold codec (use none or zstd)";
  }
  else if (strcmp (key, "cold-after") == 0) {
    if (parse_int64 (value, 1, STORE_MAX_COLD_AFTER_S, &number, &reason) == 0)
      c->recompress.after_s = number;
  }
  else if (strcmp (key, "level") == 0) {
    if (parse_int64 (value, -1000, 1000, &number, &reason) == 0) {
      c->codec.level = number;
      options->level_given = true;
    }
  }
  else if (strcmp (key, "pool-limit") == 0) {
    if (parse_pool_limit (value, &c->pool_limit_bytes, &reason) == 0)
      options->pool_limit_given = true;
  }
  else if (strcmp (key, "huge-threshold") == 0) {
    if (parse_int64 (value, 1, CSWAP_PAGE_SIZE, &number, &reason) == 0)
      c->huge_threshold_bytes = number;
  }
  else if (strcmp (key, "max-zspage-pages") == 0) {
    if (parse_int64 (value, 1, ZS_MAX_PAGES_PER_ZSPAGE, &number, &reason) == 0)
      c->max_pages_per_zspage = number;
  }
  else if (strcmp (key, "backing") == 0) {
    /* none: no backing file, and `cswap up` chooses none either. */
    if (strcmp (value, "none") == 0)
      c->backing_path = NULL;
    else if (value[0] == '\0' || strlen (value) >= sizeof options->backing_path)
      reason = "the path must be 1..4095 bytes";
    else {
      strcpy (options->backing_path, value);
      c->backing_path = options->backing_path;
    }
  }
  else if (strcmp (key, "backing-size") == 0)
    parse_size (value, &c->backing_size_bytes, &reason);
  else if (strcmp (key, "backing-prealloc") == 0) {
    bool prealloc;
    if (parse_yes_no (value, &prealloc, &reason) == 0)
      c->backing_thin = !prealloc;
  }
  else if (strcmp (key, "backing-encrypt") == 0) {
    bool encrypt;
    if (parse_yes_no (value, &encrypt, &reason) == 0)
      c->backing_in_clear = !encrypt;
  }
  else if (strcmp (key, "compact") == 0)
    parse_either (value, "auto", "off", &c->manual_compaction, &reason);
  else if (strcmp (key, "compact-threshold") == 0) {
    if (parse_int64 (value, 1, 100, &number, &reason) == 0)
      c->auto_compact_percent = number;
  }
  else if (strcmp (key, "reserve") == 0) {
    if (parse_memory_size (value, &c->reserve_bytes, &reason) == 0)
      options->reserve_given = true;
  }
  else if (strcmp (key, "lock-memory") == 0)
    parse_yes_no (value, &options->lock_memory, &reason);
  else if (strcmp (key, "core-dump") == 0)
    parse_yes_no (value, &options->core_dump, &reason);
  else if (strcmp (key, "transport") == 0) {
    static const char *const names[] = {
      [TRANSPORT_AUTO] = "auto", [TRANSPORT_URING] = "uring",
      [TRANSPORT_CLASSIC] = "classic",
    };
    unsigned index;

    if (parse_choice (value, names, sizeof names / sizeof names[0], &index,
                      &reason) == 0)
      options->transport = index;
  }
  else if (strcmp (key, "accept-threshold") == 0) {
    if (parse_int64 (value, 1, 100, &number, &reason) == 0)
      c->accept_threshold_percent = number;
  }
  else if (strcmp (key, "writeback-batch") == 0) {
    if (parse_int64 (value, 1, STORE_MAX_WRITEBACK_BATCH, &number, &reason) == 0)
      c->writeback_batch_pages = number;
  }
  else if (strcmp (key, "idle-writeback") == 0) {
    if (parse_int64 (value, 0, STORE_MAX_IDLE_WRITEBACK_S, &number, &reason)
        == 0)
      c->idle_writeback_seconds = number;
  }
  else if (strcmp (key, "writeback-limit") == 0) {
    if (parse_size_or_zero (value, STORE_MIN_WRITEBACK_BUDGET_BYTES,
                            STORE_MAX_WRITEBACK_BUDGET_BYTES,
                            &c->writeback_budget.limit_bytes_per_day,
                            &reason) == 0)
      options->writeback_limit_given = true;
  }
  else if (strcmp (key, "writeback-burst") == 0)
    parse_size_or_zero (value, STORE_MIN_WRITEBACK_BUDGET_BYTES,
                        STORE_MAX_WRITEBACK_BUDGET_BYTES,
                        &c->writeback_budget.burst_bytes, &reason);
  else if (strcmp (key, "read-writeback") == 0)
    parse_yes_no (value, &c->read_writeback, &reason);
  else if (strcmp (key, "ctl") == 0) {
    if (value[0] == '\0' || strlen (value) >= sizeof options->ctl.path)
      reason = "the socket path must be 1..107 bytes";
    else
      strcpy (options->ctl.path, value);
  }
  else if (strcmp (key, "ctl-uid") == 0) {
    if (parse_int64 (value, 0, UINT32_MAX - 1, &number, &reason) == 0)
      options->ctl.allowed_uid = number;
  }
  else
    reason = "unknown parameter";

  if (reason) {
    *why = explain (key, value, reason);
    return -1;
  }
  return 0;
}

int
options_finish (struct cswap_options *options, const char **why)
{
  const struct codec_config *codec = &options->store.codec;
  int min, max;

  if (options->store.size_bytes == 0
      && options_set (options, "size", options_default_size, why) == -1)
    return -1;
  if (!options->reserve_given
      && options_set (options, "reserve", options_default_reserve, why) == -1)
    return -1;
  if (options->store.backing_path && !options->pool_limit_given) {
    if (options_set (options, "pool-limit", options_default_pool_limit, why)
        == -1)
      return -1;
    options->pool_limit_given = false;
    options->store.pool_limit_default = true;
  }
  if (options->store.backing_path && !options->writeback_limit_given) {
    if (options_set (options, "writeback-limit",
                     options_default_writeback_limit, why) == -1)
      return -1;
    options->writeback_limit_given = false;
    options->writeback_limit_default = true;
  }
  if (codec_check_level (codec->id, codec->level, &min, &max)) {
    if (min == max)
      snprintf (why_buffer, sizeof why_buffer, "level=%d: %s takes no level",
                codec->level, codec_name (codec->id));
    else
      snprintf (why_buffer, sizeof why_buffer, "level=%d: %s levels are %d..%d",
                codec->level, codec_name (codec->id), min, max);
    *why = why_buffer;
    return -1;
  }
  return 0;
}
