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
#include "daemon-log.h"
#include "mib-text.h"
#include "monotonic.h"
#include "nbd-export-id.h"
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

/* The contents ids' salt (nbd-exports.h): a key random at each start,
 * and how many drops there have been; one plugin per process.
 */
static struct {
  unsigned char key[16];        /* set by nbd_exports_init */
  _Atomic uint64_t drops;
} contents_salt;

void
nbd_exports_init (struct nbd_exports *exports)
{
  *exports = (struct nbd_exports) { 0 };
  pthread_mutex_init (&exports->claim_lock, NULL);
  /* Unique, not secret: GRND_INSECURE never waits for the entropy pool,
   * which a swap service started early in boot may find empty.
   */
  if (getrandom (contents_salt.key, sizeof contents_salt.key, GRND_INSECURE)
      != sizeof contents_salt.key) {
    uint64_t now_ns = monotonic_ns () ^ ((uint64_t) getpid () << 32);

    memcpy (contents_salt.key, &now_ns, sizeof now_ns);
  }
}

/* Names E NAME (config time, or a claim with claim_lock), its id and
 * its label with it.
 */
static void
set_name (const struct nbd_exports *exports, struct nbd_export *e, char *name)
{
  e->name = name;
  nbd_export_id (name, e->id);
  e->label = exports->unlisted ? e->id : e->name;
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

/* The export called NAME, or NULL: with claim_lock, or while the table
 * is made.
 */
static struct nbd_export *
find (struct nbd_exports *exports, const char *name)
{
  unsigned count = exports->count;

  for (unsigned i = 0; i < count; i++)
    if (strcmp (exports->list[i].name, name) == 0)
      return &exports->list[i];
  return NULL;
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
  if (find (exports, e.name)) {
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
  for (unsigned i = 0; i < configured; i++) {
    set_name (exports, &exports->list[i], exports->list[i].name);
    if (!exports->list[i].own_limit)
      exports->list[i].limit_bytes = exports->default_limit_bytes;
  }
  config->size_bytes *= exports->areas;
  config->areas = exports->areas;
  return 0;
}

void
nbd_export_new_contents (struct nbd_export *export)
{
  struct {
    unsigned char key[sizeof contents_salt.key];
    uint64_t drops;
  } salt = { .drops = atomic_load (&contents_salt.drops) };
  int failed;
  uint64_t id;

  memcpy (salt.key, contents_salt.key, sizeof salt.key);
  id = nbd_export_digest (&salt, sizeof salt, export->name, &failed);
  /* Without a digest, a random id: a client may then take an export
   * claimed again for one whose pages went, never the other way round.
   */
  if (failed && getrandom (&id, sizeof id, GRND_INSECURE) != sizeof id)
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

/* Whether NAME may name an export made from the template: the admin
 * must be able to name it on the control socket, one word that is not
 * an id ("#…", nbd_export_is_named), and the log to print it.
 */
static bool
claimable_name (const char *name)
{
  if (*name == '#')
    return false;
  for (const unsigned char *c = (const unsigned char *) name; *c; c++)
    if (*c <= ' ' || *c == 0x7f)
      return false;
  return true;
}

/* What to call NAME, an export or not, in the log: itself, or with
 * export-list=no its id (into ID).
 */
static const char *
label_of (const struct nbd_exports *exports, const char *name,
          char id[NBD_EXPORT_ID_BYTES])
{
  if (!exports->unlisted)
    return name;
  nbd_export_id (name, id);
  return id;
}

/* The made export whose area a claim may take: one that holds no page,
 * has no client and is not being dropped, the one idle longest; or
 * NULL.  With claim_lock.
 */
static struct nbd_export *
reusable (struct nbd_exports *exports, struct store *store)
{
  struct nbd_export *best = NULL;

  for (unsigned i = exports->configured; i < exports->count; i++) {
    struct nbd_export *e = &exports->list[i];
    struct store_area_stats s;

    if (e->connections || e->dropping
        || store_area_stats (store, e->area, &s) != 0 || s.pages_stored)
      continue;
    if (best == NULL || e->idle_since_ns < best->idle_since_ns)
      best = e;
  }
  return best;
}

/* A new export NAME from the template's areas: a new entry while there
 * is room, else one reusable() gives up.  With claim_lock.
 */
static struct nbd_export *
claim (struct nbd_exports *exports, struct store *store, const char *name,
       const char **why)
{
  unsigned n = exports->count;
  struct nbd_export *e = n < exports->areas ? &exports->list[n]
    : reusable (exports, store);
  char *copy, id[NBD_EXPORT_ID_BYTES];

  if (!claimable_name (name)) {
    /* Not the name itself: its control characters would reach the log. */
    snprintf (why_buffer, sizeof why_buffer, "export %s: a name made from "
              "export-template= may hold no space or control character, "
              "nor start with '#'", exports->unlisted
              ? label_of (exports, name, id) : "name refused");
    *why = why_buffer;
    return NULL;
  }
  if (e == NULL) {
    snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\": all %u "
              "exports of export-template=%.64s hold pages or clients",
              label_of (exports, name, id), exports->template_count,
              exports->template);
    *why = why_buffer;
    return NULL;
  }
  copy = strdup (name);
  if (copy == NULL) {
    *why = "out of memory";
    return NULL;
  }
  if (e == &exports->list[n])
    *e = (struct nbd_export) { .area = n,
                               .limit_bytes = exports->default_limit_bytes };
  else {
    daemon_log ("cswap: export \"%s\" gives its area up: it holds no "
                "page and no client has it open\n", e->label);
    free (e->name);
  }
  set_name (exports, e, copy);
  e->idle_since_ns = monotonic_ns ();
  atomic_store (&e->quota_warned, false);
  store_set_area_limit (store, e->area, e->limit_bytes);
  nbd_export_new_contents (e);
  if (e == &exports->list[n])
    exports->count = n + 1;     /* after the entry: readers take no lock */
  daemon_log ("cswap: export \"%s\" made from export-template=%s\n",
              e->label, exports->template);
  return e;
}

struct nbd_export *
nbd_exports_open (struct nbd_exports *exports, struct store *store,
                  const char *name, const char **why)
{
  char id[NBD_EXPORT_ID_BYTES];
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  struct nbd_export *e = find (exports, name);

  if (e == NULL && (exports->template == NULL || *name == '\0'
                    || fnmatch (exports->template, name, 0) != 0)) {
    snprintf (why_buffer, sizeof why_buffer,
              "export \"%.64s\" is not configured",
              label_of (exports, name, id));
    *why = why_buffer;
    return NULL;
  }
  if (e == NULL)
    e = claim (exports, store, name, why);
  if (e && e->dropping) {
    snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\" is being "
              "dropped: try again", e->label);
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

int
nbd_exports_each (struct nbd_exports *exports,
                  int (*visit) (void *arg, const struct nbd_export *e),
                  void *arg)
{
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  unsigned count = exports->count;

  for (unsigned i = 0; i < count; i++) {
    int r = visit (arg, &exports->list[i]);
    if (r)
      return r;
  }
  return 0;
}

bool
nbd_export_is_named (const struct nbd_exports *exports,
                     const struct nbd_export *e, const char *name)
{
  return strcmp (e->name, name) == 0
    || (exports->unlisted && strcmp (e->id, name) == 0);
}

/* Frees E's pages, which begin_drop (below) marked dropping; with
 * claim_lock not held.  CAUSE goes in the line that says so.
 */
static int
finish_drop (struct nbd_exports *exports, struct store *store,
             struct nbd_export *e, const char *cause)
{
  uint64_t size = store_area_size (store);
  struct store_area_stats s;
  int r;

  if (store_area_stats (store, e->area, &s) != 0)
    s.pages_stored = 0;
  r = store_zero (store, size, e->area * size);
  atomic_fetch_add (&contents_salt.drops, 1);
  nbd_export_new_contents (e);
  /* dropping keeps the name: it is still E's. */
  if (r == 0)
    daemon_log ("cswap: export \"%s\" dropped: %s, %" PRIu64 " pages "
                "freed\n", e->label, cause, s.pages_stored);
  else
    daemon_log ("cswap: warning: export \"%s\": dropping it (%s): "
                "freeing its pages: %s\n", e->label, cause, strerror (-r));
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
  e->dropping = false;
  e->idle_since_ns = monotonic_ns ();
  return r;
}

/* Marks E dropping if it may be: 0, or -EBUSY with *WHY.  With
 * claim_lock.
 */
static int
begin_drop (struct nbd_export *e, const char **why)
{
  if (e->dropping) {
    snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\" is being "
              "dropped already", e->label);
    *why = why_buffer;
    return -EBUSY;
  }
  if (e->connections) {
    snprintf (why_buffer, sizeof why_buffer, "export \"%.64s\" is open "
              "(%u client(s)): it is dropped only with none", e->label,
              e->connections);
    *why = why_buffer;
    return -EBUSY;
  }
  e->dropping = true;
  return 0;
}

int
nbd_exports_drop (struct nbd_exports *exports, struct store *store,
                  const char *name, const char **why)
{
  struct nbd_export *e = NULL;
  int r;

  {
    ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
    for (unsigned i = 0; i < exports->count && e == NULL; i++)
      if (nbd_export_is_named (exports, &exports->list[i], name))
        e = &exports->list[i];
    if (e == NULL) {
      snprintf (why_buffer, sizeof why_buffer, "no export named %.64s",
                name);
      *why = why_buffer;
      return -ENOENT;
    }
    if ((r = begin_drop (e, why)) != 0)
      return r;
  }
  r = finish_drop (exports, store, e, "by command");
  if (r)
    *why = "freeing its pages failed";
  return r;
}

int
nbd_exports_drop_if_idle (struct nbd_exports *exports, struct store *store,
                          unsigned area, uint64_t idle_ns)
{
  struct nbd_export *e = &exports->list[area];
  struct store_area_stats s;
  const char *why;
  char cause[64];

  {
    ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&exports->claim_lock);
    uint64_t now_ns = monotonic_ns ();

    /* Checked here, as the drop starts: a client that came and went
     * since the idle thread last looked has made it young again.
     */
    if (e->connections || e->dropping || now_ns < e->idle_since_ns
        || now_ns - e->idle_since_ns < idle_ns
        || store_area_stats (store, e->area, &s) != 0 || s.pages_stored == 0
        || begin_drop (e, &why) != 0)
      return 0;
  }
  snprintf (cause, sizeof cause, "no client for %" PRIu64 " s "
            "(export-idle-drop)", exports->idle_drop_s);
  int r = finish_drop (exports, store, e, cause);
  return r ? r : 1;
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
  /* Said from the thread serving the write: no %f (mib-text.h). */
  char limit[MIB_TEXT_BYTES];
  if (!atomic_exchange (&export->quota_warned, true))
    daemon_log ("cswap: warning: export \"%s\" is at its quota of %s "
                "MiB: its writes are refused (ENOSPC) until it trims; raise "
                "export=%s:LIMIT or export-limit=\n", export->label,
                mib_text (limit, export->limit_bytes),
                export->label == export->name ? export->name : "NAME");
  return -ENOSPC;
}
