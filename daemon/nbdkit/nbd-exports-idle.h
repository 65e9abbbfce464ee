/* cswap: export-idle-drop — dropping exports no client has had open for
 * a while (nbd-exports-idle.c).
 */
#ifndef CSWAP_NBD_EXPORTS_IDLE_H
#define CSWAP_NBD_EXPORTS_IDLE_H

#include "nbd-exports.h"
#include "store.h"

/* Starts the thread that drops EXPORTS' idle ones from STORE, where
 * export-idle-drop= asks for it (else does nothing).  0, or -errno.
 * One per process: the plugin has one table.
 */
extern int nbd_exports_idle_start (struct nbd_exports *exports,
                                   struct store *store);
/* Stops it, if it runs. */
extern void nbd_exports_idle_stop (void);

#endif
