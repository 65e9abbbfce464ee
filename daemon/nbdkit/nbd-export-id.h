/* cswap: what an export's name hashes to — its id, for the log and the
 * metrics when names are secrets, and its contents id.
 *
 * Both are the first 8 bytes of SHA-256 (OpenSSL's libcrypto, which the
 * store links already for the backing file's cipher).  The id is
 * SHA-256(name) alone: the same at every start, so that the journal and
 * scraped metrics line up across restarts, and non-reversible for the
 * names export-list=no is for, long random ones (a guessable name is no
 * secret anyway: whoever guesses it may open the export).  The contents
 * id hashes a salt first (nbd-exports.c: a random key and a count of
 * drops), so that it is new whenever an export's pages may have gone.
 * Both are made off the I/O path (at start, at a claim, at a drop), so
 * libcrypto stays among the libraries left unlocked when no backing file
 * is sealed (memory-safety.c): its pages are read back if need be.
 *
 * No state, no lock: thread-safe.
 */
#ifndef CSWAP_NBD_EXPORT_ID_H
#define CSWAP_NBD_EXPORT_ID_H

#include <stddef.h>
#include <stdint.h>

/* "#", 16 hex digits, NUL. */
#define NBD_EXPORT_ID_BYTES 18

/* NAME's id, "#" and 16 hex digits, into ID. */
extern void nbd_export_id (const char *name, char id[NBD_EXPORT_ID_BYTES]);
/* The first 8 bytes of SHA-256(SALT, NAME) as a number; 0 with *FAILED
 * set when libcrypto fails (out of memory).
 */
extern uint64_t nbd_export_digest (const void *salt, size_t salt_bytes,
                                   const char *name, int *failed);

#endif /* CSWAP_NBD_EXPORT_ID_H */
