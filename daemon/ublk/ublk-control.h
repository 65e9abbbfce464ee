/* cswap: the ublk driver's control commands (/dev/ublk-control).
 *
 * One ring, one command at a time, each waited for: the control path is
 * a handful of commands at start and stop, never on the request path.
 * The driver is asked what it has (GET_FEATURES, 6.5 and later; older
 * drivers have none of the features cswap asks about) and commands are
 * sent in the encoding it takes.
 *
 * Locking: a control handle belongs to one thread (the daemon's main
 * thread).
 */
#ifndef CSWAP_UBLK_CONTROL_H
#define CSWAP_UBLK_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ublk-abi.h"

struct ublk_control;

/* Opens /dev/ublk-control (loading ublk_drv is the caller's: `modprobe
 * ublk_drv`) and asks for the driver's features.  Returns NULL with
 * errno set (ENOENT: no driver) and *WHY saying what failed.
 */
extern struct ublk_control *ublk_control_open (const char **why);
extern void ublk_control_close (struct ublk_control *control);

/* What the driver has: UBLK_F_* bits (0 before 6.5). */
extern uint64_t ublk_control_features (const struct ublk_control *control);

/* Each returns 0 or a negative errno from the driver. */
extern int ublk_control_add (struct ublk_control *control,
                             struct ublk_dev_info *info);
extern int ublk_control_set_params (struct ublk_control *control,
                                    uint32_t dev_id,
                                    const struct ublk_params *params);
/* Blocks until every queue has fetched every tag, then makes the disk. */
extern int ublk_control_start (struct ublk_control *control, uint32_t dev_id,
                               pid_t server_pid);
extern int ublk_control_stop (struct ublk_control *control, uint32_t dev_id);
extern int ublk_control_delete (struct ublk_control *control, uint32_t dev_id);
/* What the driver knows of device DEV_ID into *INFO (-ENODEV: none). */
extern int ublk_control_get_info (struct ublk_control *control,
                                  uint32_t dev_id, struct ublk_dev_info *info);
/* Device DEV_ID's parameters into *PARAMS. */
extern int ublk_control_get_params (struct ublk_control *control,
                                    uint32_t dev_id,
                                    struct ublk_params *params);
/* User recovery of a device whose server died (ublk-abi.h): START (-EBUSY
 * while the dead server's char device is still open), then, once every
 * queue has fetched every tag, END with the new server's PID (blocks
 * until they have).
 */
extern int ublk_control_start_recovery (struct ublk_control *control,
                                        uint32_t dev_id);
extern int ublk_control_end_recovery (struct ublk_control *control,
                                      uint32_t dev_id, pid_t server_pid);

#endif /* CSWAP_UBLK_CONTROL_H */
