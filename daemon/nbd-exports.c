/* cswap: the nbdkit plugin's exports (nbd-exports.h). */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cleanup.h"
#include "monotonic.h"
#include "nbd-exports.h"
#include "page.h"
#include "parse.h"
#include "zsmalloc.h"

/* The NBD protocol's longest export name. */
#define NBD_MAX_EXPORT_NAME 4096
#define DEFAULT_TEMPLATE_COUNT 16
#define MAX_IDLE_DROP_S (366 * 24 * 3600ull)    /* a year */

/* Per thread: opens run on nbdkit's connection threads. */
static _Thread_local char why_buffer[256];

void
nbd_exports_init (struct nbd_exports *exports)
{
  *exports = (struct nbd_exports) { 0 };
  pthread_mutex_init (&exports->claim_lock, NULL);
}

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

/* Appends export NAME while the table is made (one thread, no lock). */
static int
append (struct nbd_exports *exports, const struct nbd_export *e,
        const char **why)
{
  unsigned n = exports->count;
  struct nbd_export *list = realloc (exports->list, (n + 1) * sizeof *list);

  if (list == NULL) {
    *why = "out of memory";
    return -1;
  }
  exports->list = list;
  exports->list[n] = *e;
  exports->count = n + 1;
  return 0;
}

static int
add_export (struct nbd_exports *exports, const char *value, const char **why)
{
  const char *colon = strchr (value, ':');
  size_t length = colon ? (size_t) (colon - value) : strlen (value);
  struct nbd_export e = { .area = exports->count, .own_limit = colon != NULL };

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
  if (colon
      && parse_limit ("export", value, colon + 1, &e.limit_bytes, why) == -1)
    return -1;
  e.name = strndup (value, length);
  if (e.name == NULL) {
    *why = "out of memory";
    return -1;
  }
  if (nbd_exports_find (exports, e.name)) {
    snprintf (why_buffer, sizeof why_buffer, "export=%.64s: named twice",
              e.name);
    *why = why_buffer;
  }
  else if (append (exports, &e, why) == 0)
    return 0;
  free (e.name);
  return -1;
}

static int
set_template (struct nbd_exports *exports, const char *value, const char **why)
{
  if (*value == '\0') {
    *why = "export-template=: a pattern, such as client-*";
    return -1;
  }
  free (exports->template);
  exports->template = strdup (value);
  if (exports->template == NULL) {
    *why = "out of memory";
    return -1;
  }
  return 0;
}

int
nbd_exports_config (struct nbd_exports *exports, const char *key,
                    const char *value, const char **why)
{
  uint64_t n;

  if (strcmp (key, "export") == 0)
    return add_export (exports, value, why) == 0 ? 1 : -1;
  if (strcmp (key, "export-limit") == 0)
    return parse_limit (key, value, value, &exports->default_limit_bytes,
                        why) == 0 ? 1 : -1;
  if (strcmp (key, "export-template") == 0)
    return set_template (exports, value, why) == 0 ? 1 : -1;
  if (strcmp (key, "export-template-count") == 0) {
    const char *reason;

    if (parse_uint64 (value, 1, STORE_MAX_AREAS, &n, &reason) == -1) {
      snprintf (why_buffer, sizeof why_buffer, "%s=%.64s: %s", key, value,
                reason);
      *why = why_buffer;
      return -1;
    }
    exports->template_count = n;
    return 1;
  }
  if (strcmp (key, "export-list") == 0) {
    bool listed;
    const char *reason;

    if (parse_yes_no (value, &listed, &reason) == -1) {
      snprintf (why_buffer, sizeof why_buffer, "%s=%.64s: %s", key, value,
                reason);
      *why = why_buffer;
      return -1;
    }
    exports->unlisted = !listed;
    return 1;
  }
  if (strcmp (key, "export-idle-drop") == 0) {
    const char *reason;

    if (parse_uint64 (value, 0, MAX_IDLE_DROP_S, &exports->idle_drop_s,
                      &reason) == -1) {
      snprintf (why_buffer, sizeof why_buffer, "%s=%.64s: %s", key, value,
                reason);
      *why = why_buffer;
      return -1;
    }
    return 1;
  }
  return 0;
}

int
nbd_exports_finish (struct nbd_exports *exports, struct store_config *config,
                    const char **why)
{
  uint64_t pages = config->size_bytes / CSWAP_PAGE_SIZE;
  unsigned configured = exports->count;

  if (exports->template_count && exports->template == NULL) {
    *why = "export-template-count= without export-template=";
    return -1;
  }
  if (exports->template && exports->template_count == 0)
    exports->template_count = DEFAULT_TEMPLATE_COUNT;
  if (exports->unlisted && exports->count == 0 && exports->template == NULL) {
    *why = "export-list=no without export= or export-template=: one device "
      "under any name has no name to keep secret";
    return -1;
  }
  exports->configured = configured;
  exports->areas = configured
    + (exports->template ? exports->template_count : 0);
  if (exports->areas == 0)
    return 0;
  if (exports->areas > STORE_MAX_AREAS
      || pages > ZS_MAX_OWNER_COOKIE / exports->areas) {
    snprintf (why_buffer, sizeof why_buffer,
              "%u exports of size=%" PRIu64 "M: more than the %u exports "
              "or the %" PRIu64 " GiB one store holds", exports->areas,
              config->size_bytes >> 20, STORE_MAX_AREAS,
              ((uint64_t) ZS_MAX_OWNER_COOKIE * CSWAP_PAGE_SIZE) >> 30);
    *why = why_buffer;
    return -1;
  }
  /* Room for every claim now: entries never move once served. */
  struct nbd_export *list = realloc (exports->list,
                                     exports->areas * sizeof *list);
  if (list == NULL) {
    *why = "out of memory";
    return -1;
  }
  exports->list = list;
  for (unsigned i = 0; i < configured; i++)
    if (!exports->list[i].own_limit)
      exports->list[i].limit_bytes = exports->default_limit_bytes;
  config->size_bytes *= exports->areas;
  config->areas = exports->areas;
  return 0;
}

void
nbd_export_new_contents (struct nbd_export *export)
{
  uint64_t id;

  /* Unique, not secret: GRND_INSECURE never waits for the entropy pool,
   * which a swap service started early in boot may find empty.
   */
  if (getrandom (&id, sizeof id, GRND_INSECURE) != sizeof id)
    id = monotonic_ns () ^ ((uint64_t) getpid () << 32);
  atomic_store (&export->contents_id, id);
}

int
nbd_exports_apply (struct nbd_exports *exports, struct store *store)
{
  uint64_t now_ns = monotonic_ns ();

  for (unsigned i = 0; i < exports->count; i++) {
    exports->list[i].idle_since_ns = now_ns;
    nbd_export_new_contents (&exports->list[i]);
    int r = store_set_area_limit (store, exports->list[i].area,
                                  exports->list[i].limit_bytes);
    if (r)
      return r;
  }
  return 0;
}

struct nbd_export *
nbd_exports_find (struct nbd_exports *exports, const char *name)
{
  unsigned count = exports->count;

  for (unsigned i = 0; i < count; i++)
    if (strcmp (exports->list[i].name, name) == 0)
      return &exports->list[i];
  return NULL;
}

/* A new export NAME from the template's areas; called with claim_lock. */
static struct nbd_export *
claim (struct nbd_exports *exports, struct store *store, const char *name,
       const char **why)
{
  unsigned n = exports->count;
  struct nbd_export e = { .area = n,
                          .limit_bytes = exports->default_limit_bytes,
                          .idle_since_ns = monotonic_ns () };

  if (n == exports->areas) {
    snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\": all %u "
              "exports of export-template=%.64s are taken", name,
              exports->template_count, exports->template);
    *why = why_buffer;
    return NULL;
  }
  e.name = strdup (name);
  if (e.name == NULL) {
    *why = "out of memory";
    return NULL;
  }
  store_set_area_limit (store, e.area, e.limit_bytes);
  nbd_export_new_contents (&e);
  exports->list[n] = e;
  exports->count = n + 1;       /* after the entry: readers take no lock */
  fprintf (stderr, "cswap: export \"%s\" made from export-template=%s\n",
           name, exports->template);
  return &exports->list[n];
}

struct nbd_export *
nbd_exports_open (struct nbd_exports *exports, struct store *store,
                  const char *name, const char **why)
{
  struct nbd_export *e = nbd_exports_find (exports, name);

  if (e == NULL && (exports->template == NULL || *name == '\0'
                    || fnmatch (exports->template, name, 0) != 0)) {
    snprintf (why_buffer, sizeof why_buffer,
              "export \"%.64s\" is not configured", name);
    *why = why_buffer;
    return NULL;
  }
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  if (e == NULL)
    e = nbd_exports_find (exports, name);   /* claimed meanwhile? */
  if (e == NULL)
    e = claim (exports, store, name, why);
  if (e && e->dropping) {
    snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\" is being "
              "dropped: try again", name);
    *why = why_buffer;
    return NULL;
  }
  if (e)
    e->connections++;
  return e;
}

void
nbd_exports_close (struct nbd_exports *exports, struct nbd_export *export)
{
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  if (--export->connections == 0)
    export->idle_since_ns = monotonic_ns ();
}

unsigned
nbd_exports_clients (struct nbd_exports *exports,
                     const struct nbd_export *export)
{
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  return export->connections;
}

uint64_t
nbd_exports_idle_ns (struct nbd_exports *exports,
                     const struct nbd_export *export, uint64_t now_ns)
{
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  if (export->connections || export->dropping
      || now_ns < export->idle_since_ns)
    return 0;
  return now_ns - export->idle_since_ns;
}

int
nbd_exports_drop (struct nbd_exports *exports, struct store *store,
                  struct nbd_export *export, const char **why)
{
  uint64_t size = store_area_size (store);
  int r;

  {
    ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
    if (export->connections || export->dropping) {
      if (export->dropping)
        snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\" is "
                  "being dropped already", export->name);
      else
        snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\" is "
                  "open (%u client(s)): it is dropped only with none",
                  export->name, export->connections);
      *why = why_buffer;
      return -EBUSY;
    }
    export->dropping = true;
  }
  r = store_zero (store, size, export->area * size);
  nbd_export_new_contents (export);
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  export->dropping = false;
  export->idle_since_ns = monotonic_ns ();
  if (r)
    *why = "freeing its pages failed";
  return r;
}

void
nbd_exports_free (struct nbd_exports *exports)
{
  for (unsigned i = 0; i < exports->count; i++)
    free (exports->list[i].name);
  free (exports->list);
  free (exports->template);
  pthread_mutex_destroy (&exports->claim_lock);
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
