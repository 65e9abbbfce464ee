/* cswap: /etc/cswap.conf — the device and service options in a file,
 * completed by drop-ins (config-dropins.h).
 *
 *   # cswap.conf(5)
 *   size = min(ram / 2, 4096)
 *   codec = zstd
 *   priority = 100
 *
 * One `key = value` per line; blank lines and comments (from a `#` that
 * starts a line or follows a blank) are ignored.  A key is either a device
 * option, checked by handing it to options_set() (so the file takes
 * exactly the keys the daemons take, and no list here can drift from
 * options.c), or one of the service keys below, which the `cswap` helper
 * uses and the daemons only check.  Each key may be given once in a file;
 * a later file (a drop-in) overrides an earlier one's keys.
 *
 * Every error names the place: "PATH:LINE: reason".
 */
#ifndef CSWAP_CONFIG_FILE_H
#define CSWAP_CONFIG_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "config-origins.h"
#include "options.h"

#define CONFIG_FILE_DEFAULT_PATH "/etc/cswap.conf"
#define CONFIG_DEFAULT_MOUNTPOINT "/run/cswap/mnt"
#define CONFIG_DEFAULT_PRIORITY 100
/* The first step of the device ladder (cswap.conf(5), ladder-step); the
 * `cswap` helper, which builds the ladder, holds the same default.
 */
#define CONFIG_DEFAULT_LADDER_STEP (64 << 20)
/* ladder-online = follow: the free online swap below which the daemon
 * swaps on the next step (doc/design.md, "Steps that follow the swap in
 * use", says why 32 MiB), and the least it may be: several times what
 * the follower lets through before it looks again (ladder-follow.h).
 */
#define CONFIG_DEFAULT_LADDER_HEADROOM (32 << 20)
#define CONFIG_MIN_LADDER_HEADROOM (4 << 20)
#define CONFIG_MAX_LADDER_HEADROOM (UINT64_C (1) << 40)

/* ladder-online: which steps of the ladder are swap.  auto is follow
 * where the device has a ladder and the daemon a control socket to be
 * handed it (frontend not remote, ladder-step > 0, ctl not none), all
 * otherwise; only an explicit follow is refused where it cannot be.
 */
enum cswap_ladder_online {
  LADDER_ONLINE_AUTO,
  LADDER_ONLINE_ALL,
  LADDER_ONLINE_FOLLOW,
};

enum cswap_frontend {
  FRONTEND_AUTO,                /* ublk where the kernel has it, else fuse
                                   (the default; `cswap` decides) */
  FRONTEND_FUSE,                /* cswap-fuse + loop */
  FRONTEND_NBD,                 /* nbdkit + nbd-client, needs the nbd driver */
  FRONTEND_REMOTE,              /* nbd-client to a cswap server: no daemon */
  FRONTEND_UBLK,                /* cswap-ublk, needs the ublk driver */
};

/* The NBD protocol's longest export name. */
#define CONFIG_MAX_EXPORT_NAME 4096
#define CONFIG_MAX_REMOTE_CONNECTIONS 16

/* The service keys: how `cswap up` attaches the device. */
struct cswap_service {
  enum cswap_frontend frontend; /* frontend = auto|fuse|nbd|remote|ublk */
  int priority;                 /* priority = -1..32767, swapon -p */
  char mountpoint[PATH_MAX];    /* mountpoint = PATH, cswap-fuse's */
  uint64_t ladder_step;         /* ladder-step = SIZE, 0 for one device */
  enum cswap_ladder_online ladder_online; /* ladder-online = auto|all|follow */
  uint64_t ladder_headroom;     /* ladder-headroom = SIZE, for follow */
  /* The remote device (remote = HOST and the remote-* keys): checked
   * here, set up by the cswap helper's nbd-client.  These say only what
   * check_service needs: which keys were given.
   */
  bool remote;                  /* remote = HOST */
  char remote_key[32];          /* a remote-* key given ("" none) */
  bool remote_certfile, remote_keyfile;
};

extern void config_service_init (struct cswap_service *service);

/* Reads PATH and then its drop-ins into OPTIONS (already options_init'ed;
 * keys in the files override what is there) and SERVICE (may be NULL: the
 * service keys are then only checked), noting in ORIGINS (may be NULL)
 * where each key came from.  Does not call options_finish(), so that a
 * command line can still add to the files before the options are checked
 * as a whole.  Returns 0, or -1 with *WHY set to "PATH:LINE: reason" (or
 * "PATH: reason" when a file cannot be read) in a static buffer.
 */
extern int config_file_read (const char *path, struct cswap_options *options,
                             struct cswap_service *service,
                             struct config_origins *origins, const char **why);

/* config_file_read(), then options_finish(), whose complaint is placed at
 * the line that gave the key it names (when ORIGINS is not NULL): the
 * whole check.
 */
extern int config_file_load (const char *path, struct cswap_options *options,
                             struct cswap_service *service,
                             struct config_origins *origins, const char **why);

#endif /* CSWAP_CONFIG_FILE_H */
