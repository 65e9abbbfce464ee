/* cswap: sealing the tier's records with AES-256-GCM (see seal.h).
 *
 * No lock: the key is written once, at creation, and the
 * sealing context is the batching caller's.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "seal.h"

#define KEY_BYTES SEAL_KEY_BYTES

struct tier_seal {
  unsigned char *key;           /* KEY_BYTES in a page of its own, locked */
  size_t key_page_bytes;
  EVP_CIPHER *cipher;           /* AES-256-GCM, fetched once */
  EVP_CIPHER_CTX *sealing;      /* seal_record's */
};

static struct tier_seal *
seal_fail (struct tier_seal *s, const char **why, const char *message,
           int error)
{
  *why = message;
  seal_destroy (s);
  errno = error;
  return NULL;
}

struct tier_seal *
seal_create (const char **why)
{
  struct tier_seal *s = calloc (1, sizeof *s);

  if (s == NULL) {
    *why = "backing file encryption: out of memory";
    return NULL;
  }
  s->key_page_bytes = sysconf (_SC_PAGESIZE);
  s->key = mmap (NULL, s->key_page_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s->key == MAP_FAILED) {
    s->key = NULL;
    return seal_fail (s, why, "backing file encryption: no memory for the "
                      "key (mmap)", errno);
  }
  /* Locked and out of core dumps before the key is drawn into it. */
  int r = seal_lock_key (s);
  if (r)
    return seal_fail (s, why, "backing file encryption: cannot lock the key "
                      "in memory (mlock; raise RLIMIT_MEMLOCK, or "
                      "backing-encrypt=no)", -r);
  madvise (s->key, s->key_page_bytes, MADV_DONTDUMP);
  if (RAND_priv_bytes (s->key, KEY_BYTES) != 1)
    return seal_fail (s, why, "backing file encryption: no random key "
                      "(RAND_priv_bytes)", EIO);
  s->cipher = EVP_CIPHER_fetch (NULL, "AES-256-GCM", NULL);
  s->sealing = EVP_CIPHER_CTX_new ();
  if (s->cipher == NULL || s->sealing == NULL
      || EVP_EncryptInit_ex2 (s->sealing, s->cipher, s->key, NULL, NULL) != 1)
    return seal_fail (s, why, "backing file encryption: libcrypto has no "
                      "AES-256-GCM", ENOSYS);
  return s;
}

int
seal_lock_key (struct tier_seal *s)
{
  return mlock (s->key, s->key_page_bytes) == -1 ? -errno : 0;
}

void
seal_copy_key (const struct tier_seal *s, unsigned char out[SEAL_KEY_BYTES])
{
  memcpy (out, s->key, KEY_BYTES);
}

bool
seal_take_key (struct tier_seal *s, const unsigned char key[SEAL_KEY_BYTES])
{
  memcpy (s->key, key, KEY_BYTES);
  return EVP_EncryptInit_ex2 (s->sealing, s->cipher, s->key, NULL, NULL) == 1;
}

void
seal_destroy (struct tier_seal *s)
{
  if (s == NULL)
    return;
  EVP_CIPHER_CTX_free (s->sealing);     /* cleanses its key schedule */
  EVP_CIPHER_free (s->cipher);
  if (s->key) {
    OPENSSL_cleanse (s->key, KEY_BYTES);
    munmap (s->key, s->key_page_bytes);
  }
  free (s);
}

bool
seal_record (struct tier_seal *s, const unsigned char nonce[SEAL_NONCE_BYTES],
             const void *ad, size_t ad_bytes, const void *plain, size_t length,
             void *cipher, void *tag)
{
  EVP_CIPHER_CTX *c = s->sealing;
  int n, tail;

  return EVP_EncryptInit_ex2 (c, NULL, NULL, nonce, NULL) == 1
    && EVP_EncryptUpdate (c, NULL, &n, ad, ad_bytes) == 1
    && EVP_EncryptUpdate (c, cipher, &n, plain, length) == 1
    && EVP_EncryptFinal_ex (c, (unsigned char *) cipher + n, &tail) == 1
    && EVP_CIPHER_CTX_ctrl (c, EVP_CTRL_GCM_GET_TAG, SEAL_TAG_BYTES, tag) == 1;
}

bool
unseal_record (const struct tier_seal *s,
               const unsigned char nonce[SEAL_NONCE_BYTES], const void *ad,
               size_t ad_bytes, const void *cipher, size_t length,
               const void *tag, void *plain)
{
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new ();
  int n, tail;
  bool ok = c != NULL
    && EVP_DecryptInit_ex2 (c, s->cipher, s->key, nonce, NULL) == 1
    && EVP_DecryptUpdate (c, NULL, &n, ad, ad_bytes) == 1
    && EVP_DecryptUpdate (c, plain, &n, cipher, length) == 1
    && EVP_CIPHER_CTX_ctrl (c, EVP_CTRL_GCM_SET_TAG, SEAL_TAG_BYTES,
                            (void *) tag) == 1
    && EVP_DecryptFinal_ex (c, (unsigned char *) plain + n, &tail) == 1;

  EVP_CIPHER_CTX_free (c);              /* cleanses its key schedule */
  if (!ok)
    OPENSSL_cleanse (plain, length);
  return ok;
}
