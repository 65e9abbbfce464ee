/* cswap: compress/ — round trip, corrupt input, same-filled pages,
 * huge threshold, several threads compressing at once, and lz4 through
 * compress/ doing the library's own work.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "compress.h"
#include "page.h"
#include "pagefile.h"
#include "tap.h"

static const struct codec_config codecs_under_test[] = {
  { CODEC_LZ4, 0 },
  { CODEC_ZSTD, 1 },
  { CODEC_ZSTD, -3 },
  { CODEC_ZSTD, 9 },
};
#define N_CODECS (sizeof codecs_under_test / sizeof codecs_under_test[0])

static struct pagefile corpus;

/* Compresses and decompresses PAGE; returns the compressed length (0 if it
 * was reported incompressible) or -1 when the round trip was not exact.
 */
static long
round_trip (const struct codec_config *c, const unsigned char *page,
            size_t huge_threshold)
{
  unsigned char packed[CSWAP_PAGE_SIZE], out[CSWAP_PAGE_SIZE];
  size_t len = codec_compress_page (c, page, packed, huge_threshold);

  if (len == 0)
    return 0;
  if (len >= huge_threshold)
    return -1;
  if (codec_decompress_page (c->id, packed, len, out) == -1)
    return -1;
  return memcmp (page, out, CSWAP_PAGE_SIZE) == 0 ? (long) len : -1;
}

static void
test_corpus_round_trip (void)
{
  for (size_t c = 0; c < N_CODECS; c++) {
    const struct codec_config *codec = &codecs_under_test[c];
    size_t bad = 0, raw = 0;
    uint64_t packed_bytes = 0;

    for (size_t i = 0; i < corpus.pages; i++) {
      long r = round_trip (codec, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE);
      if (r == -1 && bad++ < 5)
        diag ("page %zu does not round-trip", i);
      if (r == 0)
        raw++;
      packed_bytes += r > 0 ? (uint64_t) r : CSWAP_PAGE_SIZE;
    }
    ok (bad == 0, "%s level %d: all %zu corpus pages round-trip byte-exact "
        "(ratio %.2f, %zu incompressible)", codec_name (codec->id),
        codec->level, corpus.pages,
        (double) corpus.pages * CSWAP_PAGE_SIZE / packed_bytes, raw);
  }
}

/* compress/ adds nothing to lz4's work: every corpus page comes out as
 * the block the library makes when called directly (LZ4_compress_default,
 * what bench/codec compares against).  A stream (LZ4_resetStream_fast and
 * LZ4_compress_fast_continue) made other blocks, with 32-bit offsets and
 * a check of every match against the previous page's entries, and cost
 * 11% of lz4's compression speed (codec-lz4.c).
 */
static void
test_lz4_is_the_library (void)
{
  const struct codec_config lz4 = { CODEC_LZ4, 0 };
  size_t differ = 0;

  for (size_t i = 0; i < corpus.pages; i++) {
    const void *page = pagefile_page (&corpus, i);
    char ours[CSWAP_PAGE_SIZE], library[CSWAP_PAGE_SIZE];
    size_t ours_len = codec_compress_page (&lz4, page, ours, CSWAP_PAGE_SIZE);
    int library_len = LZ4_compress_default (page, library, CSWAP_PAGE_SIZE,
                                            CSWAP_PAGE_SIZE - 1);

    if (ours_len != (size_t) (library_len > 0 ? library_len : 0)
        || memcmp (ours, library, ours_len) != 0)
      differ++;
  }
  ok (differ == 0, "lz4: every corpus page compresses to the block "
      "LZ4_compress_default makes (%zu of %zu differ)", differ, corpus.pages);
}

static void
test_huge_threshold (void)
{
  unsigned char noise[CSWAP_PAGE_SIZE];
  const size_t thresholds[] = { 1, 64, 1024, 3072, 4096 };

  srand (1);
  for (size_t i = 0; i < sizeof noise; i++)
    noise[i] = rand ();
  for (size_t c = 0; c < N_CODECS; c++) {
    const struct codec_config *codec = &codecs_under_test[c];
    ok (round_trip (codec, noise, CSWAP_PAGE_SIZE) == 0,
        "%s: random bytes are reported incompressible", codec_name (codec->id));
    bool all_ok = true;
    for (size_t t = 0; t < sizeof thresholds / sizeof thresholds[0]; t++)
      for (size_t i = 0; i < corpus.pages; i += 97) {
        /* round_trip fails if the length reaches the threshold. */
        if (round_trip (codec, pagefile_page (&corpus, i), thresholds[t]) == -1)
          all_ok = false;
      }
    ok (all_ok, "%s: compressed length is always below the huge threshold",
        codec_name (codec->id));
  }
}

static void
test_same_filled (void)
{
  const uint64_t values[] = { 0, 1, UINT64_MAX, 0xdeadbeefdeadbeefull,
                              0x0102030405060708ull, 0x8000000000000000ull };
  unsigned char page[CSWAP_PAGE_SIZE], back[CSWAP_PAGE_SIZE];
  uint64_t value;

  for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
    page_fill (page, values[v]);
    bool same = page_is_same_filled (page, &value);
    ok (same && value == values[v], "page filled with %#llx is same-filled "
        "with that value", (unsigned long long) values[v]);
    memset (back, 0xa5, sizeof back);
    page_fill (back, value);
    ok (memcmp (page, back, sizeof page) == 0,
        "filling back %#llx restores the page", (unsigned long long) value);

    /* A single different byte anywhere makes it not same-filled. */
    const size_t positions[] = { 0, 7, 8, 2048, CSWAP_PAGE_SIZE - 1 };
    bool none = true;
    for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p++) {
      page[positions[p]] ^= 0x10;
      if (page_is_same_filled (page, &value))
        none = false;
      page[positions[p]] ^= 0x10;
    }
    ok (none, "one changed byte makes a %#llx page not same-filled",
        (unsigned long long) values[v]);
  }

  size_t same = 0;
  for (size_t i = 0; i < corpus.pages; i++)
    if (page_is_same_filled (pagefile_page (&corpus, i), &value))
      same++;
  ok (same > 0 && same < corpus.pages,
      "corpus has %zu same-filled pages of %zu", same, corpus.pages);
}

/* Decompressing damaged input must fail or give exactly one page; never
 * crash or read outside the buffer (AddressSanitizer checks the latter:
 * each damaged input is copied into a heap buffer of exactly its length).
 */
static void
test_corrupt_input (void)
{
  unsigned char packed[CSWAP_PAGE_SIZE], out[CSWAP_PAGE_SIZE];

  srand (2);
  for (size_t c = 0; c < N_CODECS; c++) {
    const struct codec_config *codec = &codecs_under_test[c];
    size_t truncated_accepted = 0, garbage_accepted = 0, tries = 0;

    for (size_t i = 0; i < corpus.pages && tries < 2000; i += 13) {
      size_t len = codec_compress_page (codec, pagefile_page (&corpus, i),
                                        packed, CSWAP_PAGE_SIZE);
      if (len < 8)
        continue;
      tries++;

      /* Truncated: every shorter prefix at a few cut points. */
      for (size_t cut = 0; cut < len; cut += 1 + len / 7) {
        unsigned char *copy = malloc (cut ? cut : 1);
        memcpy (copy, packed, cut);
        if (codec_decompress_page (codec->id, copy, cut, out) == 0)
          truncated_accepted++;
        free (copy);
      }

      /* Bit flips: must not crash; may decode to some page. */
      unsigned char *flipped = malloc (len);
      memcpy (flipped, packed, len);
      for (int f = 0; f < 4; f++)
        flipped[rand () % len] ^= 1 << (rand () % 8);
      (void) codec_decompress_page (codec->id, flipped, len, out);
      free (flipped);

      /* Pure garbage of the same length. */
      unsigned char *garbage = malloc (len);
      for (size_t b = 0; b < len; b++)
        garbage[b] = rand ();
      if (codec_decompress_page (codec->id, garbage, len, out) == 0)
        garbage_accepted++;
      free (garbage);
    }
    ok (tries > 0 && truncated_accepted == 0,
        "%s level %d: every truncated page is rejected (%zu pages tried)",
        codec_name (codec->id), codec->level, tries);
    ok (garbage_accepted == 0, "%s level %d: random garbage is rejected",
        codec_name (codec->id), codec->level);
    ok (codec_decompress_page (codec->id, packed, 0, out) == -1,
        "%s: empty input is rejected", codec_name (codec->id));
  }
}

#define THREADS 4

struct worker {
  size_t first;
  size_t mismatches;
};

static void *
compress_concurrently (void *opaque)
{
  struct worker *w = opaque;

  for (size_t i = w->first; i < corpus.pages; i += THREADS * 3) {
    const struct codec_config *codec = &codecs_under_test[i % N_CODECS];
    if (round_trip (codec, pagefile_page (&corpus, i), CSWAP_PAGE_SIZE) == -1)
      w->mismatches++;
  }
  return NULL;
}

static void
test_threads (void)
{
  pthread_t threads[THREADS];
  struct worker workers[THREADS];
  size_t mismatches = 0;

  for (int t = 0; t < THREADS; t++) {
    workers[t] = (struct worker) { .first = t };
    pthread_create (&threads[t], NULL, compress_concurrently, &workers[t]);
  }
  for (int t = 0; t < THREADS; t++) {
    pthread_join (threads[t], NULL);
    mismatches += workers[t].mismatches;
  }
  ok (mismatches == 0, "%d threads compressing with every codec at once: "
      "no mismatch", THREADS);
}

static void
test_names (void)
{
  enum codec_id id;
  int min, max;

  ok (codec_id_parse ("lz4", &id) == 0 && id == CODEC_LZ4, "lz4 parses");
  ok (codec_id_parse ("zstd", &id) == 0 && id == CODEC_ZSTD, "zstd parses");
  ok (codec_id_parse ("gzip", &id) == -1, "an unknown codec is refused");
  ok (codec_check_level (CODEC_ZSTD, 1, &min, &max) == 0
      && codec_check_level (CODEC_ZSTD, 99, &min, &max) == -1
      && min < 0 && max >= 19, "zstd levels are range-checked (%d..%d)",
      min, max);
}

int
main (void)
{
  const char *path = getenv ("CSWAP_CORPUS");

  if (path == NULL || pagefile_load (path, &corpus) == -1)
    tap_skip_all ("no corpus (set CSWAP_CORPUS)");
  test_names ();
  test_corpus_round_trip ();
  test_lz4_is_the_library ();
  test_huge_threshold ();
  test_same_filled ();
  test_corrupt_input ();
  test_threads ();
  pagefile_free (&corpus);
  return tap_done ();
}
