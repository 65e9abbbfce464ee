/* cswap: cswap-ublk's command line — its own options (--queues,
 * --windows, --recover, …) and the device options every front end takes.
 *
 * The device options are the other front ends' (config/options.h), as
 * --key=value, --key value, -o key=value or key=value, each handed to
 * options_set, and --config=FILE to config_file_read (cswap.conf(5)).
 * What stays here, not in config/, is cswap-ublk's alone: the keys no
 * other front end has, and the argument loop (cswap-fuse's is libfuse's
 * fuse_opt, the nbdkit plugin's is nbdkit's).
 */
#ifndef CSWAP_UBLK_OPTIONS_H
#define CSWAP_UBLK_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "config-file.h"
#include "options.h"
#include "ublk-device-life.h"

struct ublk_command_line {
  struct cswap_options device;
  struct cswap_service service;
  unsigned queues;              /* 0: one per CPU */
  unsigned depth;
  int64_t dev_id;               /* -1: the driver picks (the first's) */
  const char *windows;          /* --windows, or NULL: the whole store */
  const char *device_list;      /* --device-list FILE, or NULL */
  const char *recover;          /* --recover ID,…: devices to take over */
  bool print_size;
  bool no_standby;              /* --no-standby */
  bool discard_store;           /* --discard-store, with --recover */
};

/* The command line ARGC, ARGV into CL (the device options checked as a
 * whole, --queues defaulted to the CPUs), the windows into DEVICES,
 * *COUNT of them, and --recover's device numbers, one per window, into
 * RECOVER_IDS.  0; 1 where the command line is done (--help, --version,
 * --print-size: printed); -1 after saying why.
 */
extern int
ublk_command_line_read (int argc, char *argv[], struct ublk_command_line *cl,
                        struct served_device devices[UBLK_MAX_WINDOWS],
                        uint32_t recover_ids[UBLK_MAX_WINDOWS], int *count);

#endif /* CSWAP_UBLK_OPTIONS_H */
