#!/usr/bin/python3
"""cswap bench: deterministic generated text for the programs in bench/programs.

usage: gen-text.py words MIB FILE
       gen-text.py keyed MIB FILE

Writes about MIB MiB of text to FILE and prints one SHA-256 (hex) on
standard output, the digest the program under test must reproduce:

  words  log-like lines: a line number, a number, 6 to 14 words of a
         vocabulary of about a hundred, and a fraction, all drawn from a
         fixed seed (compressible as text is, about 3.7:1 for xz -9;
         neither random bytes nor one byte repeated).  Prints the digest
         of FILE.
  keyed  lines "KEY WORDS NUMBER", KEY ten digits, unique, in a shuffled
         order.  Key k of N is the block k / 4096 in six digits then the
         place k mod 4096 in four; line i has key (i * A) mod N, A about
         0.618 N and prime to N, so the keys are a permutation of 0..N-1
         and neighbours are far apart.  WORDS and NUMBER are drawn from a
         fixed seed for each place.  Prints the digest of the same lines
         in key order, what `LC_ALL=C sort` must output (keys are unique
         and of one width, so the byte order of the lines is the order of
         their keys): the lines are made again in key order and hashed,
         without sorting.

Cheap on purpose: the generator runs inside the measured program, so its
time and memory should be small next to the program's (lines are made in
batches and written as they are made; nothing is held but one batch and
keyed's 4096 tails): 0.45 s for 8 MiB of words, 0.39 s for 32 MiB of
keyed lines, both passes (a keyed line formatted whole each time, as a
first version did, took three times as long).
Python 3 standard library only.
"""

import hashlib
import math
import random
import sys

SEED = 20261130
WORDS = ("the of and to in is that for it as was with be by on not he this are "
         "or his from at which but have an they you were her she there been one "
         "all we their has would when if so no will more can its out up who "
         "alpha beta gamma delta epsilon zeta theta kappa lambda omicron sigma "
         "north south east west red green blue amber ivory coral page memory "
         "kernel device block swap request reply error warning started stopped "
         "connection user session timeout retry queue worker thread process "
         "file directory buffer cache index table record value field").split()
BATCH = 4096                # lines made, hashed and written at a time
BLOCK_BITS = 12             # keyed: 4096 lines a block, one prefix a block
BLOCK = 1 << BLOCK_BITS


def words_lines(mib, out):
    rng = random.Random(SEED)
    digest = hashlib.sha256()
    target = mib << 20
    written = 0
    line_no = 0
    while written < target:
        lines = []
        for _ in range(BATCH):
            text = " ".join(rng.choices(WORDS, k=rng.randrange(6, 15)))
            lines.append(f"{line_no:08d} {rng.randrange(100000)} {text} "
                         f"{rng.random():.4f}\n")
            line_no += 1
        chunk = "".join(lines).encode()
        out.write(chunk)
        digest.update(chunk)
        written += len(chunk)
    return digest.hexdigest()


def keyed_lines(mib, out):
    rng = random.Random(SEED)
    # Key k is its block (six digits) then its place in the block (four):
    # the line is the block's prefix then the place's tail, two look-ups.
    tails = [b"%04d %s %05d\n" % (j, " ".join(rng.choices(WORDS, k=rng.randrange(8, 20))).encode(),
                                   rng.randrange(100000)) for j in range(BLOCK)]
    mean = 6 + sum(map(len, tails)) / BLOCK
    blocks = max(1, round((mib << 20) / (mean * BLOCK)))
    count = blocks * BLOCK
    assert blocks <= 10 ** 6
    prefixes = [b"%06d" % b for b in range(blocks)]
    stride = int(count * (math.sqrt(5) - 1) / 2)
    while math.gcd(stride, count) != 1:
        stride += 1
    bits, place = BLOCK_BITS, BLOCK - 1
    for start in range(0, count, BATCH):
        keys = [(i * stride) % count for i in range(start, min(start + BATCH, count))]
        out.write(b"".join([prefixes[k >> bits] + tails[k & place] for k in keys]))
    # In key order a block's lines are its prefix joined to every tail.
    digest = hashlib.sha256()
    for prefix in prefixes:
        digest.update(prefix + prefix.join(tails))
    return digest.hexdigest()


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("words", "keyed"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    make = words_lines if sys.argv[1] == "words" else keyed_lines
    with open(sys.argv[3], "wb") as out:
        print(make(int(sys.argv[2]), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
