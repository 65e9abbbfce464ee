/* cswap: the nbdkit plugin's exports — one area of the store each.
 *
 * export=NAME[:LIMIT] (repeatable) names an export of size= bytes and,
 * with LIMIT, its quota: the most pool memory its pages may hold.
 * export-limit=SIZE is the quota of exports that give none.  All exports
 * share one store, so one pool and one backing file: export I is the
 * store's area I (store.h).  A client is served the export it names;
 * a name not configured is refused, and the default export (a client
 * that names none, as nbd-client does unless given -N) is the first.
 * export-template=GLOB lets clients name exports of their own: the
 * first open of a name that matches GLOB (fnmatch) and is not configured
 * claims one of export-template-count=N (default 16) areas kept for
 * them, with the export-limit quota.  Such a name holds its area while a
 * client has it open or it holds a page: once all are taken, a claim
 * takes over the area of a made export that holds none and is not open
 * (the one idle longest), so that probes and clients that never wrote
 * (an NBD_OPT_INFO, nbdinfo on a mistyped name, an export dropped) do
 * not use the areas up.  A made name must be printable without spaces
 * (`cswapctl exports NAME drop` must be able to name it).
 * Without export= or a template, the plugin serves one device under any
 * name, as before.
 *
 * Pages stay with their export, not with a connection: a client that
 * disconnects and connects again finds them where it left them.  An
 * export's pages go only when it is dropped: by `cswapctl exports NAME
 * drop`, or once no client has had it open for export-idle-drop=SECONDS
 * (nbd-exports-idle.c); never while a client has it open.  A dropped
 * export reads as zeros; a configured one keeps its name, a made one
 * until a claim takes its area.
 * With export-list=no the names are never shown to a client (NBD_OPT_LIST
 * lists none) and a client that names none is refused (no default
 * export), so that a long random name works as a secret: over TLS, a
 * client can open only the exports whose names it was given, and those
 * it claims from a template; the log and the metrics then call each
 * export by its id (nbd-export-id.h), never by its name, and so does
 * the control socket's `exports` (which accepts a name or an id).
 * Each export has a contents id, new whenever its pages may have gone
 * (the server's start, a drop), and given to clients in
 * its description: a client that connects again (cswap-connect
 * --persist) compares it, so that it never takes a restarted server's
 * zeros for the pages it left.  It is a digest of the name salted with
 * a key random at each start and the count of drops so far: a made
 * export whose area was taken over held no page, so that when its name
 * is claimed again with no drop between, it gets the same id back.
 *
 * Locking: the table is made by .config and .config_complete on
 * nbdkit's main thread, with room for every area then, so that it never
 * moves, and entry I is area I for good.  Afterwards only claims change
 * it, under claim_lock, which fills an entry before count (an atomic)
 * takes it in, and renames an entry only when no client has it open;
 * so a reader takes no lock for count, an entry's area and counters, or
 * the name of an export it has open, and takes claim_lock for any other
 * name (nbd_exports_each).  claim_lock also guards each entry's
 * connections, dropping and idle_since_ns.  It is a leaf: nothing is
 * locked under it (the store's area limit and counters are relaxed
 * atomics; a drop frees the pages after letting it go; what
 * nbd_exports_each's visitors write to is their caller's own buffer or
 * stream).
 */
#ifndef CSWAP_NBD_EXPORTS_H
#define CSWAP_NBD_EXPORTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nbd-export-id.h"
#include "store.h"

struct nbd_export {
  char *name;                   /* claim_lock for a made export: a claim
                                   renames it when no client has it open */
  char id[NBD_EXPORT_ID_BYTES]; /* with name: its id */
  const char *label;            /* with name: what the log and metrics call
                                   it, name or (export-list=no) id */
  unsigned area;                /* its index in the table, for good */
  uint64_t limit_bytes;         /* 0: none but the pool's */
  bool own_limit;               /* given as NAME:LIMIT */
  atomic_bool quota_warned;     /* nbd_export_note_refusal's */
  unsigned connections;         /* claim_lock: clients that have it open */
  bool dropping;                /* claim_lock: its pages are being freed */
  uint64_t idle_since_ns;       /* claim_lock: monotonic, its last close
                                   (its claim, its drop, the server's
                                   start) */
  _Atomic uint64_t contents_id; /* new when its pages start empty */
};

struct nbd_exports {
  struct nbd_export *list;      /* room for every area once finished */
  _Atomic unsigned count;       /* entries in use: configured, then claimed */
  unsigned configured;          /* the export= ones, first in list */
  unsigned areas;               /* configured + template_count; 0: one
                                   device under any name */
  uint64_t default_limit_bytes; /* export-limit=; 0: none */
  char *template;               /* export-template=; NULL: none */
  unsigned template_count;      /* export-template-count=; 0: the default */
  uint64_t idle_drop_s;         /* export-idle-drop=; 0: never */
  bool unlisted;                /* export-list=no: names are secrets */
  pthread_mutex_t claim_lock;   /* a leaf */
};

#define NBD_EXPORTS_HELP \
  "export=NAME[:LIMIT]       An export of size= bytes, with a quota of LIMIT\n" \
  "                          bytes of pool memory; repeat for more, one\n" \
  "                          store (default: one device under any name).\n" \
  "export-limit=SIZE         The quota of exports that give none (default\n" \
  "                          0: none but pool-limit).\n" \
  "export-template=GLOB      Clients may name exports of their own that\n" \
  "                          match GLOB (default: none).\n" \
  "export-template-count=N   How many, 1..4096 (default 16).\n" \
  "export-idle-drop=SECONDS  Free the pages of an export no client has had\n" \
  "                          open this long (default 0: never).\n" \
  "export-list=no            List no export and serve none by default: a\n" \
  "                          client must know its export's name (default\n" \
  "                          yes)."

/* The table before any key. */
extern void nbd_exports_init (struct nbd_exports *exports);
/* KEY=VALUE if it is one of the keys above: 1, or -1 with *WHY; 0 for
 * another key.
 */
extern int nbd_exports_config (struct nbd_exports *exports, const char *key,
                               const char *value, const char **why);
/* After every key: the quotas filled in, room made for the template's
 * exports, and CONFIG cut into one area per export (its size, size=
 * each).  0, or -1 with *WHY.
 */
extern int nbd_exports_finish (struct nbd_exports *exports,
                               struct store_config *config, const char **why);
/* The configured quotas, into the store made from that config; the
 * exports' idle time starts.  0 or -errno.
 */
extern int nbd_exports_apply (struct nbd_exports *exports,
                              struct store *store);

/* Sets EXPORT's contents id, whose pages start empty now: the same as
 * its name had before unless a drop came between (the top of this file).
 */
extern void nbd_export_new_contents (struct nbd_export *export);
/* Whether any export is configured or may be claimed. */
static inline bool
nbd_exports_active (const struct nbd_exports *exports)
{
  return exports->areas > 0;
}

/* The export a client that names NAME is served: a configured one,
 * else the one claimed from the template, claimed now if new, its quota
 * set in STORE; counted open until nbd_exports_close.  NULL with *WHY:
 * not configured, not a name a template export may have, every template
 * area held, or being dropped.
 */
extern struct nbd_export *nbd_exports_open (struct nbd_exports *exports,
                                            struct store *store,
                                            const char *name,
                                            const char **why);
/* A client closed EXPORT, which nbd_exports_open gave it. */
extern void nbd_exports_close (struct nbd_exports *exports,
                               struct nbd_export *export);
/* Calls VISIT (ARG, E) for each export E in the table's order, with
 * claim_lock held: VISIT may read every field of E and must take no
 * lock.  Stops at VISIT's first non-zero return, and returns it.
 */
extern int nbd_exports_each (struct nbd_exports *exports,
                             int (*visit) (void *arg,
                                           const struct nbd_export *e),
                             void *arg);
/* Whether the admin's NAME names E: E's name, or with export-list=no
 * its id.  With claim_lock held (as in nbd_exports_each's VISIT).
 */
extern bool nbd_export_is_named (const struct nbd_exports *exports,
                                 const struct nbd_export *e,
                                 const char *name);
/* Frees every page of the export NAME (nbd_export_is_named) in STORE,
 * so that it reads as zeros; opens meanwhile are refused, not waited
 * for.  Says so on stderr.  0, or with *WHY: -ENOENT, no such export;
 * -EBUSY, a client has it open or it is being dropped; the store's
 * -errno.
 */
extern int nbd_exports_drop (struct nbd_exports *exports, struct store *store,
                             const char *name, const char **why);
/* Drops the export in area AREA if it holds pages and no client has had
 * it open for IDLE_NS or more, both checked with claim_lock held as the
 * drop starts.  Says so on stderr.  1 dropped, 0 kept, or the store's
 * -errno.
 */
extern int nbd_exports_drop_if_idle (struct nbd_exports *exports,
                                     struct store *store, unsigned area,
                                     uint64_t idle_ns);
extern void nbd_exports_free (struct nbd_exports *exports);

/* A write to EXPORT returned RESULT: -EDQUOT, its quota refused it,
 * which the first time is said on stderr, becomes -ENOSPC (what NBD
 * has for it); any other RESULT is returned as it is.  Thread-safe.
 */
extern int nbd_export_note_refusal (struct nbd_export *export, int result);

#endif /* CSWAP_NBD_EXPORTS_H */
