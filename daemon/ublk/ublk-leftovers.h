/* cswap: the ublk devices a killed cswap-ublk leaves behind.
 *
 * A cswap-ublk that stops deletes its devices.  One that is killed (or
 * crashes) cannot: the driver stops the disk (/dev/ublkbN goes, every
 * request on it fails), but the device itself, /dev/ublkcN and its
 * number, stay until someone sends DEL_DEV.  `cswap up` and `cswap down`
 * clear what a dead daemon left, these included, with
 * `cswap-ublk --delete-dead N…`.
 *
 * Never a live device: one whose server is a running cswap-ublk, or
 * that is still swap, is refused and kept.
 */
#ifndef CSWAP_UBLK_LEFTOVERS_H
#define CSWAP_UBLK_LEFTOVERS_H

#include <stdbool.h>
#include <stdint.h>

/* Deletes the dead devices numbered by the COUNT strings IDS, saying
 * what it did with each; returns the exit status (0 when every one is
 * gone or was not there).
 */
extern int ublk_delete_dead (int count, char *const ids[]);

/* Whether PID is a running cswap-ublk (its main thread's name), not a
 * process that was given the number after the server died.
 */
extern bool ublk_server_alive (int32_t pid);

#endif /* CSWAP_UBLK_LEFTOVERS_H */
