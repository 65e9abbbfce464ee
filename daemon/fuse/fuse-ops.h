/* cswap: the libfuse low-level operations serving device.h's file.
 *
 * The session's userdata is the struct device (device.h) the operations
 * serve; it is set before the session starts and never changed while it
 * runs.
 */
#ifndef CSWAP_FUSE_OPS_H
#define CSWAP_FUSE_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "device.h"

extern const struct fuse_lowlevel_ops fuse_device_ops;

#endif /* CSWAP_FUSE_OPS_H */
