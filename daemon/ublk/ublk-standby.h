/* cswap: cswap-ublk's standby — the process that takes a killed server's
 * devices over without having to start under memory pressure.
 *
 * The store outlives a killed server (store-segment.h), and so do its
 * devices (ublk user recovery), but while no server runs their I/O
 * waits, and so does every task that reclaims memory: a new daemon
 * started then, by `cswap up` or the unit, waits with them, and the
 * machine stalls until memory is freed some other way (doc/design.md,
 * "ublk").  So cswap-ublk splits in two before it serves: the process
 * that was started stays, memory-locked, real-time and an I/O flusher,
 * as the standby, and its child is the server.  The standby stays the
 * process its starter knows (the unit's main PID, `cswap up`'s pid): it
 * passes on the stop signals it gets, and ends with the server's status.
 * If the server is killed, the standby takes its devices and its store
 * over itself (as --recover does) and serves, with nothing to start.
 * Once: it then has no standby of its own.
 *
 * The server tells the standby its devices' numbers once it has added
 * them (ublk_standby_report); a server that dies before has nothing to
 * take over, and the standby ends with its status.  A server that cannot
 * go on while a disk is swap exits with UBLK_EXIT_LEFT_FOR_RECOVERY,
 * leaving its devices as a killed one would: the standby takes them over
 * as it does a killed server's.
 *
 * The stop signals stay blocked from the server's death to the end of
 * the take-over, and one that comes then is acted on once the devices
 * serve, as the server would have (refused while a disk is swap): a
 * standby killed half-way would leave the devices to nobody.
 */
#ifndef CSWAP_UBLK_STANDBY_H
#define CSWAP_UBLK_STANDBY_H

#include <stdint.h>

#include "memory-safety.h"

/* The server's (and a taken-over standby's) exit status where it left
 * its devices for recovery because a disk was swap (EX_TEMPFAIL).
 */
#define UBLK_EXIT_LEFT_FOR_RECOVERY 75

/* Splits into standby and server, the standby locking before it waits
 * what IO_PATH names (memory-safety.h: the libraries of the server's I/O
 * path).  Returns 0 in the server, with *REPORT_FD to report on; in the
 * standby, returns only once the server was killed (or left its devices
 * for recovery) after reporting: 1, with IDS the COUNT devices to take
 * over, and SIGTERM, SIGINT and SIGHUP blocked.  A standby whose server
 * ended otherwise exits with its status.  -1 (no fork: the caller serves
 * alone, without a standby) after saying why.
 */
extern int ublk_standby_split (int count, uint32_t ids[],
                               const struct io_path *io_path, int *report_fd);
/* In a standby that took over: its messages, held since (stderr may be a
 * file whose pages are in swap on the devices it takes over), written
 * out once the devices serve, or at its end.  Nothing elsewhere.
 */
extern void ublk_standby_release_messages (void);
/* In the server: the COUNT devices IDS are added; 0 or -1 after saying
 * why (the standby then ends with the server).
 */
extern int ublk_standby_report (int report_fd, int count,
                                const uint32_t ids[]);

#endif /* CSWAP_UBLK_STANDBY_H */
