/* cswap: the tier's on-disk record (see record.h for the layout).
 *
 * No lock: the format is set at open, and its count is the
 * batching caller's.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "crc32c.h"
#include "record.h"

#define MAGIC_PLAIN 0xc5a9u
#define MAGIC_SEALED 0xc5abu
#define RUN_ID_BYTES 4
/* Nonce counts reserved at a time for a successor (record_format_keep):
 * one store to the kept memory per this many records sealed.
 */
#define NONCE_RESERVE_BLOCK (UINT64_C (1) << 16)

struct record_head {
  uint16_t magic, length;
  uint32_t cookie;
};
_Static_assert (sizeof (struct record_head) == RECORD_HEAD_BYTES, "head layout");
_Static_assert (RECORD_PLAIN_HEADER_BYTES == RECORD_HEAD_BYTES + RUN_ID_BYTES + 4,
                "plain: head, run id, crc32c");
_Static_assert (SEAL_NONCE_BYTES == RUN_ID_BYTES + 8,
                "sealed: the nonce is the run id and a 64-bit count");
_Static_assert (RECORD_MAX_BYTES <= 2 * TIER_BLOCK_BYTES,
                "a record fits in two blocks");

int
record_format_init (struct record_format *format, bool encrypt,
                    const char **why)
{
  *format = (struct record_format) { 0 };
  if (getrandom (&format->run_id, sizeof format->run_id, 0)
      != sizeof format->run_id) {
    *why = "backing file: no random numbers (getrandom)";
    return -1;
  }
  if (encrypt && (format->seal = seal_create (why)) == NULL)
    return -1;
  return 0;
}

void
record_format_destroy (struct record_format *format)
{
  seal_destroy (format->seal);
  format->seal = NULL;
}

int
record_format_lock_key (struct record_format *format)
{
  return format->seal ? seal_lock_key (format->seal) : 0;
}

void
record_format_keep (struct record_format *format, uint64_t *reserved)
{
  *reserved = format->sealed;
  format->reserved = reserved;
}

int
record_format_adopt (struct record_format *format, uint32_t run_id,
                     const unsigned char *key, uint64_t *reserved,
                     const char **why)
{
  if (key && format->seal == NULL
      && (format->seal = seal_create (why)) == NULL)
    return -1;
  if (key == NULL) {
    seal_destroy (format->seal);
    format->seal = NULL;
  }
  if (key && !seal_take_key (format->seal, key)) {
    *why = "backing file encryption: libcrypto refused the kept key";
    errno = EIO;
    return -1;
  }
  format->run_id = run_id;
  format->sealed = *reserved;
  format->reserved = reserved;
  return 0;
}

static uint32_t
header_bytes (bool sealed)
{
  return sealed ? RECORD_SEALED_HEADER_BYTES : RECORD_PLAIN_HEADER_BYTES;
}

static uint32_t
unpadded_bytes (bool sealed, uint32_t length)
{
  return header_bytes (sealed) + length + (sealed ? SEAL_TAG_BYTES : 0);
}

uint32_t
record_bytes (const struct record_format *format, uint32_t length)
{
  return (unpadded_bytes (format->seal != NULL, length) + TIER_OFFSET_UNIT - 1)
    / TIER_OFFSET_UNIT * TIER_OFFSET_UNIT;
}

#define PLACE_BYTES (sizeof (uint64_t) + sizeof (uint32_t))
#define SEALED_AD_BYTES (RECORD_HEAD_BYTES + PLACE_BYTES)

/* The place as the check covers it: offset, then generation. */
static void
place_bytes (struct record_place place, unsigned char out[PLACE_BYTES])
{
  memcpy (out, &place.offset, sizeof place.offset);
  memcpy (out + sizeof place.offset, &place.generation, sizeof place.generation);
}

/* Plain: the crc32c of the head and run id, the payload, the place. */
static uint32_t
plain_crc (const unsigned char *record, uint32_t length,
           struct record_place place)
{
  unsigned char at[PLACE_BYTES];
  uint32_t crc = crc32c (0, record, RECORD_HEAD_BYTES + RUN_ID_BYTES);

  crc = crc32c (crc, record + RECORD_PLAIN_HEADER_BYTES, length);
  place_bytes (place, at);
  return crc32c (crc, at, sizeof at);
}

/* Sealed: the additional data, the head and the place. */
static void
sealed_ad (const unsigned char *record, struct record_place place,
           unsigned char ad[SEALED_AD_BYTES])
{
  memcpy (ad, record, RECORD_HEAD_BYTES);
  place_bytes (place, ad + RECORD_HEAD_BYTES);
}

bool
record_write (struct record_format *format, unsigned char *out,
              struct record_place place, uint32_t cookie, const void *payload,
              uint32_t length)
{
  bool sealed = format->seal != NULL;
  struct record_head head = {
    .magic = sealed ? MAGIC_SEALED : MAGIC_PLAIN,
    .length = length, .cookie = cookie,
  };
  uint32_t header = header_bytes (sealed);
  uint32_t end = unpadded_bytes (sealed, length);

  memcpy (out, &head, sizeof head);
  memcpy (out + RECORD_HEAD_BYTES, &format->run_id, RUN_ID_BYTES);
  if (sealed) {
    unsigned char ad[SEALED_AD_BYTES];
    uint64_t count = format->sealed++;
    /* Reserved before it is used: a successor starts past it. */
    if (format->reserved && count >= *format->reserved)
      *format->reserved = count + NONCE_RESERVE_BLOCK;
    memcpy (out + RECORD_HEAD_BYTES + RUN_ID_BYTES, &count, sizeof count);
    sealed_ad (out, place, ad);
    if (!seal_record (format->seal, out + RECORD_HEAD_BYTES, ad, sizeof ad,
                      payload, length, out + header, out + header + length))
      return false;
  }
  else {
    memcpy (out + header, payload, length);
    uint32_t crc = plain_crc (out, length, place);
    memcpy (out + RECORD_HEAD_BYTES + RUN_ID_BYTES, &crc, sizeof crc);
  }
  memset (out + end, 0, record_bytes (format, length) - end);
  return true;
}

enum record_status
record_read (const struct record_format *format, unsigned char *in,
             size_t avail, struct record_place place, void *payload,
             struct record *record)
{
  struct record_head head;
  uint32_t run_id;

  if (avail < RECORD_HEAD_BYTES + RUN_ID_BYTES)
    return RECORD_NONE;
  memcpy (&head, in, sizeof head);
  bool sealed = head.magic == MAGIC_SEALED;
  if ((!sealed && head.magic != MAGIC_PLAIN) || head.length == 0
      || head.length > TIER_MAX_OBJECT_BYTES
      || unpadded_bytes (sealed, head.length) > avail)
    return RECORD_NONE;
  memcpy (&run_id, in + RECORD_HEAD_BYTES, sizeof run_id);
  /* The form is the tier's for its whole run: the other one is older. */
  if (run_id != format->run_id || sealed != (format->seal != NULL))
    return RECORD_STALE;

  uint32_t header = header_bytes (sealed);
  unsigned char *clear = payload ? payload : in + header;
  *record = (struct record) { .cookie = head.cookie, .length = head.length,
                              .payload = clear };
  if (sealed) {
    unsigned char ad[SEALED_AD_BYTES];
    sealed_ad (in, place, ad);
    return unseal_record (format->seal, in + RECORD_HEAD_BYTES, ad, sizeof ad,
                          in + header, head.length, in + header + head.length,
                          clear) ? RECORD_OK : RECORD_CORRUPT;
  }
  uint32_t crc;
  memcpy (&crc, in + RECORD_HEAD_BYTES + RUN_ID_BYTES, sizeof crc);
  if (crc != plain_crc (in, head.length, place))
    return RECORD_CORRUPT;
  if (payload)
    memcpy (payload, in + header, head.length);
  return RECORD_OK;
}
