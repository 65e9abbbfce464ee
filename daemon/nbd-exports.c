/* cswap: the nbdkit plugin's exports (nbd-exports.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbd-exports.h"
#include "page.h"
#include "parse.h"
#include "zsmalloc.h"

/* The NBD protocol's longest export name. */
#define NBD_MAX_EXPORT_NAME 4096

static char why_buffer[256];

/* A quota in TEXT, the end of KEY=VALUE: 0 (none), or at least a page. */
static int
parse_limit (const char *key, const char *value, const char *text,
             uint64_t *bytes, const char **why)
{
  const char *reason;

  if (parse_size_or_zero (text, CSWAP_PAGE_SIZE, UINT64_MAX, bytes,
                          &reason) == 0)
    return 0;
  snprintf (why_buffer, sizeof why_buffer, "%s=%.64s: %s", key, value,
            reason);
  *why = why_buffer;
  return -1;
}

static int
add_export (struct nbd_exports *exports, const char *value, const char **why)
{
  const char *colon = strchr (value, ':');
  size_t length = colon ? (size_t) (colon - value) : strlen (value);
  struct nbd_export e = { .area = exports->count };

  if (length == 0 || length > NBD_MAX_EXPORT_NAME) {
    snprintf (why_buffer, sizeof why_buffer,
              "export=%.64s: a name of 1 to %d bytes, without ':'", value,
              NBD_MAX_EXPORT_NAME);
    *why = why_buffer;
    return -1;
  }
  if (exports->count == STORE_MAX_AREAS) {
    snprintf (why_buffer, sizeof why_buffer, "export=%.64s: at most %u exports",
              value, STORE_MAX_AREAS);
    *why = why_buffer;
    return -1;
  }
  if (colon && parse_limit ("export", value, colon + 1, &e.limit_bytes, why) == -1)
    return -1;
  e.own_limit = colon != NULL;
  e.name = strndup (value, length);
  if (e.name == NULL) {
    *why = "out of memory";
    return -1;
  }
  if (nbd_exports_find (exports, e.name)) {
    snprintf (why_buffer, sizeof why_buffer, "export=%.64s: named twice",
              e.name);
    free (e.name);
    *why = why_buffer;
    return -1;
  }
  struct nbd_export *list = realloc (exports->list,
                                     (exports->count + 1) * sizeof *list);
  if (list == NULL) {
    free (e.name);
    *why = "out of memory";
    return -1;
  }
  exports->list = list;
  exports->list[exports->count++] = e;
  return 0;
}

int
nbd_exports_config (struct nbd_exports *exports, const char *key,
                    const char *value, const char **why)
{
  if (strcmp (key, "export") == 0)
    return add_export (exports, value, why) == 0 ? 1 : -1;
  if (strcmp (key, "export-limit") == 0)
    return parse_limit (key, value, value, &exports->default_limit_bytes, why) == 0
      ? 1 : -1;
  return 0;
}

int
nbd_exports_finish (struct nbd_exports *exports, struct store_config *config,
                    const char **why)
{
  uint64_t pages = config->size_bytes / CSWAP_PAGE_SIZE;

  if (exports->count == 0)
    return 0;
  if (pages > ZS_MAX_OWNER_COOKIE / exports->count) {
    snprintf (why_buffer, sizeof why_buffer,
              "%u exports of size=%" PRIu64 "M: more than the %" PRIu64
              " GiB one store addresses", exports->count,
              config->size_bytes >> 20,
              ((uint64_t) ZS_MAX_OWNER_COOKIE * CSWAP_PAGE_SIZE) >> 30);
    *why = why_buffer;
    return -1;
  }
  for (unsigned i = 0; i < exports->count; i++)
    if (!exports->list[i].own_limit)
      exports->list[i].limit_bytes = exports->default_limit_bytes;
  config->size_bytes *= exports->count;
  config->areas = exports->count;
  return 0;
}

int
nbd_exports_apply (const struct nbd_exports *exports, struct store *store)
{
  for (unsigned i = 0; i < exports->count; i++) {
    int r = store_set_area_limit (store, exports->list[i].area,
                                  exports->list[i].limit_bytes);
    if (r)
      return r;
  }
  return 0;
}

const struct nbd_export *
nbd_exports_find (const struct nbd_exports *exports, const char *name)
{
  for (unsigned i = 0; i < exports->count; i++)
    if (strcmp (exports->list[i].name, name) == 0)
      return &exports->list[i];
  return NULL;
}

void
nbd_exports_free (struct nbd_exports *exports)
{
  for (unsigned i = 0; i < exports->count; i++)
    free (exports->list[i].name);
  free (exports->list);
  *exports = (struct nbd_exports) { 0 };
}

int
nbd_export_note_refusal (struct nbd_export *export, int result)
{
  if (result != -EDQUOT)
    return result;
  if (!atomic_exchange (&export->quota_warned, true))
    fprintf (stderr, "cswap: warning: export \"%s\" is at its quota of %.1f "
             "MiB: its writes are refused (ENOSPC) until it trims; raise "
             "export=%s:LIMIT or export-limit=\n", export->name,
             export->limit_bytes / 1048576.0, export->name);
  return -ENOSPC;
}
