/* cswap: the device options, shared by every front end.
 *
 * The nbdkit plugin receives them as key=value parameters and cswap-fuse
 * as -o key=value or --key value; both hand each pair to options_set()
 * and call options_finish() once all are in, so the two front ends take
 * exactly the same options with the same checks and the same messages.
 */
#ifndef CSWAP_OPTIONS_H
#define CSWAP_OPTIONS_H

#include <limits.h>
#include <stdbool.h>

#include "control.h"
#include "store.h"

/* How cswap-fuse talks to the kernel (cswap-fuse(8), TRANSPORTS); the
 * nbdkit plugin takes the key and ignores it, so that one cswap.conf
 * serves both.
 */
enum fuse_transport_choice {
  TRANSPORT_AUTO,               /* io_uring if the kernel allows, else classic */
  TRANSPORT_URING,              /* io_uring or fail */
  TRANSPORT_CLASSIC,            /* libfuse's loop */
};

struct cswap_options {
  struct store_config store;
  bool level_given;
  bool reserve_given;           /* else options_default_reserve */
  bool pool_limit_given;        /* else, with a backing file,
                                   options_default_pool_limit */
  bool writeback_limit_given;   /* else, with a backing file,
                                   options_default_writeback_limit */
  bool writeback_limit_default; /* options_finish set it so */
  struct control_config ctl;    /* ctl= and ctl-uid= */
  char backing_path[PATH_MAX];  /* store.backing_path points here */
  bool lock_memory;             /* memory-safety.h, after any fork */
  bool core_dump;               /* false: memory_safety_forbid_core_dumps */
  enum fuse_transport_choice transport;
};

/* The text of nbdkit's config_help and of cswap-fuse --help. */
extern const char options_help[];

/* options_help as a program's --help shows it: each key as --key=…,
 * indented, on standard output.
 */
extern void options_print_help (void);

/* The size without a size= (cswap.conf(5)): an expression of the RAM. */
extern const char options_default_size[];
/* The reserve without a reserve=: an expression of the RAM too. */
extern const char options_default_reserve[];
/* The pool limit with a backing= and no pool-limit=: of the RAM too. */
extern const char options_default_pool_limit[];
/* The writeback budget with a backing= and no writeback-limit=. */
extern const char options_default_writeback_limit[];

extern void options_init (struct cswap_options *options);

/* Returns 0, or -1 with *WHY set to a message naming the key. The message
 * lives in a static buffer until the next call.
 */
extern int options_set (struct cswap_options *options, const char *key,
                        const char *value, const char **why);
/* Checks the options as a whole (the level fits the codec), and sets the
 * default size and reserve where none was given, and with a backing file
 * the default pool limit (store.pool_limit_default says it is one) and
 * writeback budget (writeback_limit_default).
 */
extern int options_finish (struct cswap_options *options, const char **why);

#endif /* CSWAP_OPTIONS_H */
