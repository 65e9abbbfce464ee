/* cswap: telling systemd how the daemon is doing (Type=notify).
 *
 * service_notify_start() sends READY=1 (the device serves), then a thread
 * sends STATUS= (pages, memory, ratio) every few seconds and, when the
 * unit sets WatchdogSec=, WATCHDOG=1 each time a read of one page through
 * the store succeeds: a store that deadlocks stops the pings.  Outside
 * systemd (no $NOTIFY_SOCKET) both calls do nothing.
 *
 * daemon_start_after_fork() calls it last, where both front ends' threads
 * may start (daemon-life.h), and daemon_stop() calls service_notify_stop()
 * first, before the store is destroyed.
 */
#ifndef CSWAP_SERVICE_NOTIFY_H
#define CSWAP_SERVICE_NOTIFY_H

#include "store.h"

/* Returns 0, or -1 with errno set if the thread could not start. */
extern int service_notify_start (struct store *store);
/* Sends STOPPING=1 and joins the thread.  Safe to call without a start. */
extern void service_notify_stop (void);

#endif /* CSWAP_SERVICE_NOTIFY_H */
