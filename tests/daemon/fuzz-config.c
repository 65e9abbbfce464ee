/* cswap: the fuzz target for the configuration file (cswap.conf(5)).
 *
 * Any bytes as a file: config_file_load() either accepts it, and then
 * every option is within the bounds the daemons rely on and the listing
 * of where each key came from prints, or refuses it with one line that
 * names the file; it must neither crash nor leak (the sanitizers' job).
 * Every key goes through options_set(), so this also fuzzes the option
 * parsers the command lines use.  The corpus puts every number at and
 * around each integer type's limit (tests/lib/limit-corpus.sh).
 *
 * Built with libFuzzer when the compiler is clang; with gcc,
 * tests/lib/fuzz-driver.c supplies a main() that replays the seed corpus
 * and random mutations.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compress.h"
#include "config-file.h"
#include "options.h"
#include "page.h"
#include "zsmalloc.h"

extern int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
fail (const char *what, const char *detail)
{
  fprintf (stderr, "fuzz-config: %s: %s\n", what, detail ? detail : "(null)");
  abort ();
}

static bool
terminated (const char *buffer, size_t size)
{
  return memchr (buffer, '\0', size) != NULL;
}

/* A writeback-limit or writeback-burst the store takes. */
static bool
budget_bytes_valid (uint64_t bytes)
{
  return bytes == 0 || (bytes >= STORE_MIN_WRITEBACK_BUDGET_BYTES
                        && bytes <= STORE_MAX_WRITEBACK_BUDGET_BYTES);
}

/* What an accepted file must have left in OPTIONS and SERVICE. */
static void
check_accepted (const struct cswap_options *o, const struct cswap_service *s)
{
  const struct store_config *c = &o->store;
  int min, max;

  if (c->size_bytes == 0 || c->size_bytes % CSWAP_PAGE_SIZE
      || c->size_bytes / CSWAP_PAGE_SIZE > ZS_MAX_OWNER_COOKIE)
    fail ("accepted a bad size", NULL);
  if (codec_check_level (c->codec.id, c->codec.level, &min, &max))
    fail ("accepted a bad level", codec_name (c->codec.id));
  if (c->recompress.enabled
      && (c->recompress.cold.id >= CODEC_COUNT
          || codec_check_level (c->recompress.cold.id, c->recompress.cold.level,
                                &min, &max)))
    fail ("accepted a bad cold codec", NULL);
  if (c->huge_threshold_bytes > CSWAP_PAGE_SIZE
      || c->max_pages_per_zspage > ZS_MAX_PAGES_PER_ZSPAGE
      || c->accept_threshold_percent > 100
      || c->writeback_batch_pages > STORE_MAX_WRITEBACK_BATCH
      || c->idle_writeback_seconds > STORE_MAX_IDLE_WRITEBACK_S
      || c->recompress.after_s > STORE_MAX_COLD_AFTER_S
      || c->auto_compact_percent > 100
      || (c->pool_limit_bytes && c->pool_limit_bytes < STORE_MIN_POOL_LIMIT_BYTES)
      || !budget_bytes_valid (c->writeback_budget.limit_bytes_per_day)
      || !budget_bytes_valid (c->writeback_budget.burst_bytes)
      || o->ctl.allowed_uid < -1 || o->ctl.allowed_uid >= UINT32_MAX)
    fail ("accepted a number out of range", NULL);
  if (!terminated (o->backing_path, sizeof o->backing_path)
      || (c->backing_path && c->backing_path != o->backing_path)
      || !terminated (o->ctl.path, sizeof o->ctl.path)
      || !terminated (s->mountpoint, sizeof s->mountpoint)
      || s->mountpoint[0] != '/')
    fail ("accepted a bad path", NULL);
  if (s->priority < -1 || s->priority > 32767
      || (s->frontend != FRONTEND_AUTO && s->frontend != FRONTEND_FUSE
          && s->frontend != FRONTEND_NBD && s->frontend != FRONTEND_REMOTE
          && s->frontend != FRONTEND_UBLK))
    fail ("accepted a bad service key", NULL);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static int fd = -1;
  static char path[64];
  static FILE *devnull;
  struct config_origins origins;
  struct cswap_options options;
  struct cswap_service service;
  const char *why = NULL;

  /* The bytes as a file, in memory: config_file_load opens a path. */
  if (fd == -1) {
    fd = memfd_create ("cswap.conf", MFD_CLOEXEC);
    if (fd == -1)
      fail ("memfd_create", NULL);
    snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
    devnull = fopen ("/dev/null", "we");
    if (devnull == NULL)
      fail ("opening /dev/null", NULL);
  }
  if (ftruncate (fd, 0) == -1
      || (size && pwrite (fd, data, size, 0) != (ssize_t) size))
    fail ("writing the file", NULL);

  options_init (&options);
  config_service_init (&service);
  config_origins_init (&origins);
  if (config_file_load (path, &options, &service, &origins, &why) == 0) {
    check_accepted (&options, &service);
    config_origins_print (devnull, &origins, &options);
  }
  else if (why == NULL || strncmp (why, path, strlen (path)) != 0
           || strchr (why, '\n') || strlen (why) >= PATH_MAX + 512)
    fail ("refused without one line naming the file", why);
  config_origins_free (&origins);
  return 0;
}
