/* cswap: the nbdkit plugin's exports — one area of the store each.
 *
 * export=NAME[:LIMIT] (repeatable) names an export of size= bytes and,
 * with LIMIT, its quota: the most pool memory its pages may hold.
 * export-limit=SIZE is the quota of exports that give none.  All exports
 * share one store, so one pool and one backing file: export I is the
 * store's area I (store.h).  A client is served the export it names;
 * a name not configured is refused, and the default export (a client
 * that names none, as nbd-client does unless given -N) is the first.
 * Without export=, the plugin serves one device under any name, as
 * before.
 *
 * Pages stay with their export, not with a connection: a client that
 * disconnects and connects again finds them where it left them.
 *
 * Locking: none.  The table is made by .config and .config_complete on
 * nbdkit's main thread, then only read.
 */
#ifndef CSWAP_NBD_EXPORTS_H
#define CSWAP_NBD_EXPORTS_H

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
};

struct nbd_exports {
  struct nbd_export *list;
  unsigned count;               /* 0: one device under any name */
  uint64_t default_limit_bytes; /* export-limit=; 0: none */
};

#define NBD_EXPORTS_HELP \
  "export=NAME[:LIMIT]       An export of size= bytes, with a quota of LIMIT\n" \
  "                          bytes of pool memory; repeat for more, one\n" \
  "                          store (default: one device under any name).\n" \
  "export-limit=SIZE         The quota of exports that give none (default\n" \
  "                          0: none but pool-limit)."

/* KEY=VALUE if it is one of the keys above: 1, or -1 with *WHY; 0 for
 * another key.
 */
extern int nbd_exports_config (struct nbd_exports *exports, const char *key,
                               const char *value, const char **why);
/* After every key: the quotas filled in, and CONFIG cut into one area
 * per export (its size, size= each).  0, or -1 with *WHY.
 */
extern int nbd_exports_finish (struct nbd_exports *exports,
                               struct store_config *config, const char **why);
/* The quotas, into the store made from that config.  0 or -errno. */
extern int nbd_exports_apply (const struct nbd_exports *exports,
                              struct store *store);
/* The export called NAME, or NULL. */
extern const struct nbd_export *nbd_exports_find (const struct nbd_exports *exports,
                                                  const char *name);
extern void nbd_exports_free (struct nbd_exports *exports);
/* A write to EXPORT returned RESULT: -EDQUOT, its quota refused it,
 * which the first time is said on stderr, becomes -ENOSPC (what NBD
 * has for it); any other RESULT is returned as it is.  Thread-safe.
 */
extern int nbd_export_note_refusal (struct nbd_export *export, int result);

#endif /* CSWAP_NBD_EXPORTS_H */
