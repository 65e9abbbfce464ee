/* cswap: a stand-in for libFuzzer's main(), so that gcc builds run a
 * fuzz target (LLVMFuzzerTestOneInput, which aborts on a failed check) as
 * an ordinary TAP test:
 *
 *   fuzz-TARGET-driver CORPUS-DIR [ITERATIONS]
 *
 * feeds every file of CORPUS-DIR to LLVMFuzzerTestOneInput, then ITERATIONS
 * (default 20000) mutations of them: bytes flipped, inserted, deleted,
 * lines spliced, and random bytes.  The seed is fixed, so a failure repeats.
 * There is no coverage feedback: that is what the clang build's libFuzzer
 * adds.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* The corpora hold about 250 seeds each (tests/lib/limit-corpus.sh). */
#define MAX_SEEDS 512
#define MAX_INPUT_BYTES 8192

extern int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

struct seed {
  uint8_t data[MAX_INPUT_BYTES];
  size_t len;
};

static struct seed seeds[MAX_SEEDS];
static size_t seed_count;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
next_random (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void
load_seeds (const char *dir_path)
{
  DIR *dir = opendir (dir_path);
  struct dirent *d;
  char path[4096];

  if (dir == NULL) {
    perror (dir_path);
    exit (EXIT_FAILURE);
  }
  while ((d = readdir (dir)) != NULL) {
    FILE *f;

    if (d->d_name[0] == '.')
      continue;
    if (seed_count == MAX_SEEDS) {
      /* Not silently: a seed left out is a case no longer tested. */
      fprintf (stderr, "%s: more than %d seeds (raise MAX_SEEDS)\n",
               dir_path, MAX_SEEDS);
      exit (EXIT_FAILURE);
    }
    snprintf (path, sizeof path, "%s/%s", dir_path, d->d_name);
    f = fopen (path, "rb");
    if (f == NULL) {
      perror (path);
      exit (EXIT_FAILURE);
    }
    seeds[seed_count].len = fread (seeds[seed_count].data, 1, MAX_INPUT_BYTES, f);
    fclose (f);
    seed_count++;
  }
  closedir (dir);
}

/* One mutation of INPUT, in place. */
static void
mutate (struct seed *input)
{
  size_t at = input->len ? next_random () % input->len : 0;
  const struct seed *other = &seeds[next_random () % seed_count];

  switch (next_random () % 6) {
  case 0:                       /* flip a byte */
    if (input->len)
      input->data[at] ^= 1u << (next_random () % 8);
    break;
  case 1:                       /* insert a random byte */
    if (input->len < MAX_INPUT_BYTES) {
      memmove (input->data + at + 1, input->data + at, input->len - at);
      input->data[at] = next_random ();
      input->len++;
    }
    break;
  case 2:                       /* delete a byte */
    if (input->len) {
      memmove (input->data + at, input->data + at + 1, input->len - at - 1);
      input->len--;
    }
    break;
  case 3:                       /* append another seed */
    if (input->len + other->len <= MAX_INPUT_BYTES) {
      memcpy (input->data + input->len, other->data, other->len);
      input->len += other->len;
    }
    break;
  case 4:                       /* a special character */
    if (input->len)
      input->data[at] = " \t\r\n\"\\%\xff"[next_random () % 8];
    break;
  default:                      /* random bytes */
    input->len = next_random () % 64;
    for (size_t i = 0; i < input->len; i++)
      input->data[i] = next_random ();
  }
}

int
main (int argc, char *argv[])
{
  int64_t iterations = 20000;
  const char *why;
  struct seed input;

  if (argc < 2 || argc > 3
      || (argc == 3
          && parse_int64 (argv[2], 0, INT64_MAX, &iterations, &why) == -1)) {
    fprintf (stderr, "usage: %s CORPUS-DIR [ITERATIONS]\n", argv[0]);
    return EXIT_FAILURE;
  }
  load_seeds (argv[1]);
  if (seed_count == 0) {
    fprintf (stderr, "%s: no seeds\n", argv[1]);
    return EXIT_FAILURE;
  }
  for (size_t i = 0; i < seed_count; i++)
    LLVMFuzzerTestOneInput (seeds[i].data, seeds[i].len);
  for (int64_t i = 0; i < iterations; i++) {
    input = seeds[next_random () % seed_count];
    for (unsigned n = 1 + next_random () % 4; n > 0; n--)
      mutate (&input);
    LLVMFuzzerTestOneInput (input.data, input.len);
  }
  printf ("1..1\nok 1 - %zu seeds and %lld mutations, every check passed\n",
          seed_count, (long long) iterations);
  return EXIT_SUCCESS;
}
