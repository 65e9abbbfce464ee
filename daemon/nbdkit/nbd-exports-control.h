/* cswap: the control socket's `exports [NAME]` (nbd-exports-control.c). */
#ifndef CSWAP_NBD_EXPORTS_CONTROL_H
#define CSWAP_NBD_EXPORTS_CONTROL_H

#include "control.h"
#include "nbd-exports.h"

/* The extension for EXPORTS served from STORE; both outlive it.  One per
 * process: the plugin has one table.
 */
extern const struct control_extension *
nbd_exports_control_extension (struct nbd_exports *exports,
                               struct store *store);

#endif /* CSWAP_NBD_EXPORTS_CONTROL_H */
