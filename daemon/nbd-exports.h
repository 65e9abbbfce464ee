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
 * them, with the export-limit quota, for as long as the server runs.
 * Without export= or a template, the plugin serves one device under any
 * name, as before.
 *
 * Pages stay with their export, not with a connection: a client that
 * disconnects and connects again finds them where it left them.  An
 * export's pages go only when it is dropped: by `cswapctl exports NAME
 * drop`, or once no client has had it open for export-idle-drop=SECONDS
 * (nbd-exports-idle.c); never while a client has it open.  A dropped
 * export keeps its name (and a template's, its area) and reads as zeros.
 * With export-list=no the names are never shown to a client (NBD_OPT_LIST
 * lists none) and a client that names none is refused (no default
 * export), so that a long random name works as a secret: over TLS, a
 * client can open only the exports whose names it was given, and those
 * it claims from a template.
 * Each export has a contents id, random, new whenever its pages start
 * empty (the server's start, a claim, a drop), and given to clients in
 * its description: a client that connects again (cswap-connect
 * --persist) compares it, so that it never takes a restarted server's
 * zeros for the pages it left.
 *
 * Locking: the table is made by .config and .config_complete on
 * nbdkit's main thread, with room for every area then, so that it never
 * moves.  Afterwards only claims change it, under claim_lock, which
 * fills an entry before count (an atomic) takes it in; so readers take
 * no lock and see only whole entries.  claim_lock also guards each
 * entry's connections, dropping and idle_since_ns.  It is a leaf:
 * nothing is locked under it (the store's area limit is a relaxed
 * atomic; a drop frees the pages after letting it go).
 */
#ifndef CSWAP_NBD_EXPORTS_H
#define CSWAP_NBD_EXPORTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

struct nbd_export {
  char *name;
  unsigned area;
  uint64_t limit_bytes;         /* 0: none but the pool's */
  bool own_limit;               /* given as NAME:LIMIT */
  atomic_bool quota_warned;     /* nbd_export_note_refusal's */
  unsigned connections;         /* claim_lock: clients that have it open */
  bool dropping;                /* claim_lock: its pages are being freed */
  uint64_t idle_since_ns;       /* claim_lock: monotonic, its last close
                                   (its claim, the server's start) */
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

/* A new contents id for EXPORT, whose pages start empty now. */
extern void nbd_export_new_contents (struct nbd_export *export);
/* Whether any export is configured or may be claimed. */
static inline bool
nbd_exports_active (const struct nbd_exports *exports)
{
  return exports->areas > 0;
}

/* The export called NAME, configured or claimed, or NULL.  No lock. */
extern struct nbd_export *nbd_exports_find (struct nbd_exports *exports,
                                            const char *name);
/* The export a client that names NAME is served: nbd_exports_find's,
 * else a new one claimed from the template, its quota set in STORE;
 * counted open until nbd_exports_close.  NULL with *WHY: not configured,
 * every template area taken, or being dropped.
 */
extern struct nbd_export *nbd_exports_open (struct nbd_exports *exports,
                                            struct store *store,
                                            const char *name,
                                            const char **why);
/* A client closed EXPORT, which nbd_exports_open gave it. */
extern void nbd_exports_close (struct nbd_exports *exports,
                               struct nbd_export *export);
/* How many clients have EXPORT open. */
extern unsigned nbd_exports_clients (struct nbd_exports *exports,
                                     const struct nbd_export *export);
/* Nanoseconds since a client last had EXPORT open, at NOW_NS; 0 while
 * one has it open.
 */
extern uint64_t nbd_exports_idle_ns (struct nbd_exports *exports,
                                     const struct nbd_export *export,
                                     uint64_t now_ns);
/* Frees every page EXPORT holds in STORE, so that it reads as zeros;
 * opens wait out nothing: they are refused meanwhile.  0, or -EBUSY
 * with *WHY when a client has it open, or the store's -errno.
 */
extern int nbd_exports_drop (struct nbd_exports *exports, struct store *store,
                             struct nbd_export *export, const char **why);
extern void nbd_exports_free (struct nbd_exports *exports);

/* A write to EXPORT returned RESULT: -EDQUOT, its quota refused it,
 * which the first time is said on stderr, becomes -ENOSPC (what NBD
 * has for it); any other RESULT is returned as it is.  Thread-safe.
 */
extern int nbd_export_note_refusal (struct nbd_export *export, int result);

#endif /* CSWAP_NBD_EXPORTS_H */
