#!/usr/bin/python3
"""cswap bench: deterministic generated text for the programs in bench/programs.

usage: gen-text.py words MIB FILE
       gen-text.py keyed MIB FILE
       gen-text.py keyed-json MIB FILE
       gen-text.py c MIB FILE

Writes about MIB MiB of text to FILE and prints on standard output what
the program under test must reproduce (a SHA-256 in hex, or for c the
number the compiled program must print):

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
  keyed-json  the records of keyed, one JSON object a line, in the same
         shuffled order: {"key":"KEY","words":["WORD",…],"n":"NUMBER"}.
         Prints the digest of those records as keyed's lines "KEY WORDS
         NUMBER" in key order, what printing them sorted by key must give
         (fewer records than keyed's for the same MIB: a JSON line is
         longer).
  c      a C program (GNU C, <stdint.h> and <stdio.h>) of about 800
         functions a MiB, each 24 steps of 64-bit multiply-adds, shifts,
         rotations and branches on constants drawn from a fixed seed
         (noinline, so a compiler keeps and optimizes every one), and a
         main that chains them and prints the result in decimal.  Prints
         that number, worked out here with the same wrap-around
         arithmetic.  gcc -O2 peaks at 209 MiB resident on 1 MiB of it.

Cheap on purpose: the generator runs inside the measured program, so its
time and memory should be small next to the program's (lines are made in
batches and written as they are made; nothing is held but one batch,
keyed's 4096 tails and c's call lines, one a function): 0.45 s for 8 MiB of words, 0.39 s for 32 MiB of
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


def keyed_records(mib, out, render, opening=b""):
    """Writes keyed records in a shuffled order, each the opening, its
    block's prefix and the tail render(place, words, number); returns the
    digest of the same records as keyed text lines, in key order."""
    rng = random.Random(SEED)
    # Key k is its block (six digits) then its place in the block (four):
    # the line is the block's prefix then the place's tail, two look-ups.
    fields = [(j, " ".join(rng.choices(WORDS, k=rng.randrange(8, 20))), rng.randrange(100000))
              for j in range(BLOCK)]
    tails = [render(*f) for f in fields]
    mean = len(opening) + 6 + sum(map(len, tails)) / BLOCK
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
        out.write(b"".join([opening + prefixes[k >> bits] + tails[k & place] for k in keys]))
    # In key order a block's lines are its prefix joined to every tail.
    text_tails = [text_tail(*f) for f in fields]
    digest = hashlib.sha256()
    for prefix in prefixes:
        digest.update(prefix + prefix.join(text_tails))
    return digest.hexdigest()


def text_tail(place, words, number):
    return b"%04d %s %05d\n" % (place, words.encode(), number)


def json_tail(place, words, number):
    listed = ",".join('"%s"' % w for w in words.split())
    return b'%04d","words":[%s],"n":"%05d"}\n' % (place, listed.encode(), number)


def keyed_lines(mib, out):
    return keyed_records(mib, out, text_tail)


def keyed_json(mib, out):
    return keyed_records(mib, out, json_tail, b'{"key":"')


C_STEPS = 24                # operations a generated C function
MASK64 = (1 << 64) - 1


def c_step(rng):
    """One operation of a generated function: its C and what it does."""
    kind, a, s = rng.randrange(4), rng.getrandbits(64) | 1, rng.randrange(1, 64)
    if kind == 0:
        return (f"  x = x * UINT64_C({a}) + UINT64_C({a >> 3});",
                lambda x: (x * a + (a >> 3)) & MASK64)
    if kind == 1:
        return f"  x ^= x >> {s};", lambda x: x ^ (x >> s)
    if kind == 2:
        return (f"  x = (x << {s}) | (x >> {64 - s});",
                lambda x: ((x << s) | (x >> (64 - s))) & MASK64)
    return (f"  if (x & UINT64_C({1 << s})) x += UINT64_C({a}); else x -= {s};",
            lambda x: (x + a) & MASK64 if x & (1 << s) else (x - s) & MASK64)


def c_program(mib, out):
    rng = random.Random(SEED)
    target = mib << 20
    written = 0
    acc = 0
    calls = []
    out.write(b"#include <stdint.h>\n#include <stdio.h>\n")
    while written < target:
        i = len(calls)
        steps = [c_step(rng) for _ in range(C_STEPS)]
        text = (f"static uint64_t __attribute__ ((noinline)) f{i} (uint64_t x)\n{{\n"
                + "\n".join(code for code, _ in steps) + "\n  return x;\n}\n").encode()
        out.write(text)
        written += len(text)
        # main calls f_i with the sum so far xor i and adds what it returns.
        x = acc ^ i
        for _, step in steps:
            x = step(x)
        acc = (acc + x) & MASK64
        calls.append(f"  acc += f{i} (acc ^ {i});\n")
    out.write(("int\nmain (void)\n{\n  uint64_t acc = 0;\n" + "".join(calls)
               + '  printf ("%llu\\n", (unsigned long long) acc);\n  return 0;\n}\n').encode())
    return str(acc)


MAKERS = {"words": words_lines, "keyed": keyed_lines, "keyed-json": keyed_json,
          "c": c_program}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in MAKERS:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    make = MAKERS[sys.argv[1]]
    with open(sys.argv[3], "wb") as out:
        print(make(int(sys.argv[2]), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
