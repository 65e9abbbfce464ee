/* cswap: window exports — a part of the one device, served as a device
 * of its own.
 *
 * Without export= keys (nbd-exports.h), a client that names the export
 * "window:OFFSET:LENGTH" (bytes, in decimal: whole pages, at least two,
 * within size=) is served the LENGTH bytes of the device that start at
 * OFFSET, as a device of LENGTH bytes; any other name is the whole
 * device, as before.  `cswap up` with frontend = nbd connects one nbd
 * device to each step of its ladder so, as it attaches a loop device to
 * each window of cswap-fuse's file: the daemon can then swap the steps
 * on and off as the swap in use needs (ladder-follow.h).
 */
#ifndef CSWAP_NBD_WINDOW_H
#define CSWAP_NBD_WINDOW_H

#include <stdint.h>

#define NBD_WINDOW_PREFIX "window:"

/* 1 with *OFFSET and *LENGTH if NAME is a window's name and the window
 * lies within a device of DEVICE_BYTES; 0 if NAME is not a window's
 * name; -1 with *WHY if it is one, but malformed or out of the device.
 */
extern int nbd_window_parse (const char *name, uint64_t device_bytes,
                             uint64_t *offset, uint64_t *length,
                             const char **why);

#endif /* CSWAP_NBD_WINDOW_H */
