#!/usr/bin/python3
# cswap: bench/programs/random-check.py MIB [ROUNDS] — a program that fills
# MIB MiB of 1 MiB blocks, each 4 KiB page 2 KiB of random bytes then 2 KiB
# of zeros (about 2:1, harder to compress than fill-check's pages), keeps
# each page's CRC-32, and then reads pages at random, as many reads as
# there are pages, ROUNDS times (default 1), checking each.  Sized past
# what compressed RAM holds (2.5 times MemTotal), it is the workload of
# issue 63: a swap device with a disk behind it must put pages there, and
# the random reads fetch them back one by one.  Exits 0 and prints
# "random-check: ok" when every page read back as written, 1 with the
# first bad page otherwise.
import array
import os
import random
import sys
import zlib

mib = int(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
PAGE = 4096
pages_per_block = (1 << 20) // PAGE
blocks = []
crcs = array.array("I")
for i in range(mib):
    block = bytearray(1 << 20)
    for offset in range(0, 1 << 20, PAGE):
        block[offset:offset + PAGE // 2] = os.urandom(PAGE // 2)
        crcs.append(zlib.crc32(memoryview(block)[offset:offset + PAGE]))
    blocks.append(block)
pages = mib * pages_per_block
rng = random.Random(63)
for n in range(rounds):
    for _ in range(pages):
        page = rng.randrange(pages)
        block = blocks[page // pages_per_block]
        offset = page % pages_per_block * PAGE
        if zlib.crc32(memoryview(block)[offset:offset + PAGE]) != crcs[page]:
            print(f"random-check: page {page} differs in round {n + 1}", flush=True)
            sys.exit(1)
print(f"random-check: ok ({mib} MiB, {rounds} rounds of {pages} random reads)",
      flush=True)
