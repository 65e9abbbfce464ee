/* cswap: which drop-ins complete a configuration file (cswap.conf(5),
 * DROP-INS), and in what order, the systemd way:
 *
 *   /etc/cswap.conf                  read first
 *   /etc/cswap.conf.d/NAME.conf   }  then all of them in the lexical order
 *   /usr/lib/cswap.conf.d/N.conf  }  of their names, wherever they are
 *
 * A name in both directories is read once, from /etc: the administrator's
 * file replaces the package's, and one linked to /dev/null masks it.
 *
 * For the configuration FILE (cswap -c FILE, cswap-fuse --config FILE,
 * nbdkit cswap config=FILE), the first directory is FILE.d and the second
 * /usr/lib/BASE.d, BASE being FILE's base name: the defaults give the
 * table above, and a file elsewhere brings only its own drop-ins.  The
 * environment variable CSWAP_VENDOR_CONFIG_DIR replaces /usr/lib (for
 * tests).  Only names ending in ".conf" and not starting with '.' count;
 * a missing directory has none.
 */
#ifndef CSWAP_CONFIG_DROPINS_H
#define CSWAP_CONFIG_DROPINS_H

#include <stdbool.h>
#include <stddef.h>

#define CONFIG_VENDOR_DIR "/usr/lib"

struct config_dropin {
  char *path;                   /* the drop-in that counts */
  char *hidden;                 /* the vendor file of the same name it
                                 * replaces or masks, or NULL */
  bool masked;                  /* PATH is /dev/null: nothing to read */
};

struct config_dropins {
  size_t count;
  struct config_dropin *items;  /* in the order they are read */
};

/* Lists the drop-ins of CONFIG_PATH into *DROPINS (freed with
 * config_dropins_free() whatever the result).  Returns 0, or -1 with *WHY
 * set to "DIR: reason" in a static buffer when a directory that exists
 * cannot be read.
 */
extern int config_dropins_list (const char *config_path,
                                struct config_dropins *dropins,
                                const char **why);
extern void config_dropins_free (struct config_dropins *dropins);

#endif /* CSWAP_CONFIG_DROPINS_H */
