/* cswap: export names' ids and digests (nbd-export-id.h). */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "nbd-export-id.h"

uint64_t
nbd_export_digest (const void *salt, size_t salt_bytes, const char *name,
                   int *failed)
{
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned md_bytes = 0;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  int done = ctx != NULL
    && EVP_DigestInit_ex (ctx, EVP_sha256 (), NULL) == 1
    && EVP_DigestUpdate (ctx, salt, salt_bytes) == 1
    && EVP_DigestUpdate (ctx, name, strlen (name)) == 1
    && EVP_DigestFinal_ex (ctx, md, &md_bytes) == 1 && md_bytes >= 8;
  uint64_t value = 0;

  EVP_MD_CTX_free (ctx);
  *failed = !done;
  if (done)
    for (int i = 0; i < 8; i++)
      value = value << 8 | md[i];
  return value;
}

void
nbd_export_id (const char *name, char id[NBD_EXPORT_ID_BYTES])
{
  int failed;
  uint64_t digest = nbd_export_digest ("", 0, name, &failed);

  /* Without a digest, an id that reveals nothing rather than the name. */
  if (failed)
    snprintf (id, NBD_EXPORT_ID_BYTES, "#????????????????");
  else
    snprintf (id, NBD_EXPORT_ID_BYTES, "#%016llx",
              (unsigned long long) digest);
}
