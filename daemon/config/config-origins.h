/* cswap: where each key of a merged configuration came from, as
 * `cswap-fuse --check-config` and `cswap check` print it (cswap.conf(5)):
 *
 *   # /etc/cswap.conf
 *   # /etc/cswap.conf.d/50-size.conf
 *   # /etc/cswap.conf.d/60-pool.conf: linked to /dev/null, masks /usr/lib/cswap.conf.d/60-pool.conf
 *   size = 50%  # /etc/cswap.conf.d/50-size.conf:2, 8192 MiB
 *   codec = lz4  # /etc/cswap.conf:3
 *
 * first the files in the order they were read, then each key with the
 * value that counts, the file and line that gave it, and for the two
 * sizes that may follow the machine (size, pool-limit) what they come to
 * here.  A size nobody gave is shown as the default it is, and so is the
 * pool limit a backing file brings when none was given:
 *
 *   pool-limit = ram / 5  # default with a backing file, 1603 MiB  The listing
 * is itself a valid cswap.conf, and the `cswap` helper reads its service
 * keys from it, so the helper and the daemons agree on the merge.
 */
#ifndef CSWAP_CONFIG_ORIGINS_H
#define CSWAP_CONFIG_ORIGINS_H

#include <stdio.h>

#include "config-dropins.h"
#include "options.h"

/* More than there are keys: only keys that were accepted are noted. */
#define CONFIG_MAX_KEYS 64

struct config_origin {
  char *key;
  char *value;                  /* as written */
  char *path;
  unsigned line;
};

struct config_origins {
  size_t count;
  struct config_origin keys[CONFIG_MAX_KEYS];  /* in order of first use */
  char *main_path;              /* the configuration file */
  struct config_dropins dropins;        /* and its drop-ins, as read */
};

extern void config_origins_init (struct config_origins *origins);
extern void config_origins_free (struct config_origins *origins);

/* KEY = VALUE from PATH:LINE, replacing what an earlier file gave.
 * Returns 0, or -1 with *WHY set (out of memory).
 */
extern int config_origins_note (struct config_origins *origins,
                                const char *key, const char *value,
                                const char *path, unsigned line,
                                const char **why);

/* The origin of KEY, or NULL if no file gave it. */
extern const struct config_origin *
config_origins_find (const struct config_origins *origins, const char *key);

/* The listing above, for ORIGINS as read into OPTIONS. */
extern void config_origins_print (FILE *out,
                                  const struct config_origins *origins,
                                  const struct cswap_options *options);

#endif /* CSWAP_CONFIG_ORIGINS_H */
