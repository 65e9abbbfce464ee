/* cswap: sealing the tier's records — encryption at rest.
 *
 * Swapped memory holds whatever programs held: passwords, keys, tokens.
 * On disk it would outlive the process and the machine's power-off, so
 * each record is sealed with AES-256-GCM (OpenSSL's libcrypto) under a
 * key drawn at random when the tier opens.  The key lives in a page of
 * its own, locked (mlock: never swapped) and left out of core dumps,
 * zeroed when the tier closes, and is never written to a disk: a daemon
 * whose store outlives it keeps a copy in that store's locked
 * shared-memory segment, for a successor (keep.c), gone at the next
 * boot.  A child
 * of fork() inherits the page but not its lock, so a daemon that forks
 * after the tier opens locks it again (seal_lock_key, from
 * store_start_background): without that, with lock-memory=no or a failed
 * mlockall, the key could be swapped out (issue 27).  OpenSSL
 * keeps its expanded copy in its cipher contexts: the sealing one for the
 * tier's life, an unsealing one for the moment of each call; those are
 * on the heap, locked with the rest of the daemon's memory (lock-memory=
 * yes, the default) and cleansed when freed.  A restarted daemon has a new
 * key, so nothing from before it can be read back: not by it, not by
 * anyone who later reads the file or the disk after a reboot.
 *
 * Measured against libsodium's AES-256-GCM and XChaCha20-Poly1305
 * (bench/tier, doc/design.md): libcrypto's AES-GCM seals about 1.7 times
 * as fast as libsodium's, which is what keeps sealed writeback above 80%
 * of clear writeback on a fast disk.
 *
 * The nonce is the caller's 12 bytes, which it keeps unique for the key's
 * life (record.c: the run's random id and a count of records sealed).
 * The tag authenticates the ciphertext and the caller's additional data,
 * so it is also the record's integrity check.
 *
 * Threads: seal_record is one thread's at a time (the tier's batching
 * caller: it uses the sealing context); unseal_record any thread's, each
 * call with a context of its own.  No lock.
 */
#ifndef CSWAP_TIER_SEAL_H
#define CSWAP_TIER_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEAL_KEY_BYTES 32
#define SEAL_NONCE_BYTES 12
#define SEAL_TAG_BYTES 16

struct tier_seal;

/* A fresh random key in locked memory.  Returns NULL with *WHY naming
 * the problem (and errno set).
 */
extern struct tier_seal *seal_create (const char **why);
/* Locks the key's page in memory: seal_create does, and a child of
 * fork() must again.  0 or -errno (mlock's: RLIMIT_MEMLOCK).
 */
extern int seal_lock_key (struct tier_seal *seal);
/* The key, copied out to OUT, and another taken in from KEY (a killed
 * daemon's, kept for its successor: tier.h, tier_keep_state).  Both
 * buffers must be locked memory.  seal_take_key returns false if the
 * library failed.
 */
extern void seal_copy_key (const struct tier_seal *seal,
                           unsigned char out[SEAL_KEY_BYTES]);
extern bool seal_take_key (struct tier_seal *seal,
                           const unsigned char key[SEAL_KEY_BYTES]);
/* Zeroes the key and frees it; NULL-safe. */
extern void seal_destroy (struct tier_seal *seal);

/* Encrypts LENGTH bytes from PLAIN into CIPHER and writes the tag to TAG,
 * under NONCE, authenticating AD (AD_BYTES) too.  Returns false if the
 * library failed (nothing to trust in CIPHER then).
 */
extern bool seal_record (struct tier_seal *seal,
                         const unsigned char nonce[SEAL_NONCE_BYTES],
                         const void *ad, size_t ad_bytes, const void *plain,
                         size_t length, void *cipher, void *tag);
/* The inverse: false, with PLAIN zeroed, when TAG does not match (another
 * key, or the bytes or AD changed).  CIPHER and PLAIN may be the same.
 */
extern bool unseal_record (const struct tier_seal *seal,
                           const unsigned char nonce[SEAL_NONCE_BYTES],
                           const void *ad, size_t ad_bytes, const void *cipher,
                           size_t length, const void *tag, void *plain);

#endif /* CSWAP_TIER_SEAL_H */
