#!/usr/bin/python3
# cswap: bench/programs/fill-check.py MIB [PASSES] — a program that fills
# MIB MiB of 1 MiB blocks, each 4 KiB page 1 KiB of random bytes then 3 KiB
# of zeros (about 4:1 for lz4, like much of real anonymous memory), keeps
# each block's SHA-256, and then reads every block back PASSES times
# (default 2), checking each digest.  Sized past the machine's RAM, it
# makes the whole machine swap with no cgroup: the workload of issue 25 on
# a small VM.  Exits 0 and prints "fill-check: ok" when every block reads
# back as written, 1 with the first bad block otherwise.
import hashlib
import os
import sys

mib = int(sys.argv[1])
passes = int(sys.argv[2]) if len(sys.argv) > 2 else 2
blocks = []
digests = []
for i in range(mib):
    block = bytearray(1 << 20)
    for offset in range(0, 1 << 20, 4096):
        block[offset:offset + 1024] = os.urandom(1024)
    blocks.append(block)
    digests.append(hashlib.sha256(block).digest())
for n in range(passes):
    for i, block in enumerate(blocks):
        if hashlib.sha256(block).digest() != digests[i]:
            print(f"fill-check: block {i} differs on pass {n + 1}", flush=True)
            sys.exit(1)
print(f"fill-check: ok ({mib} MiB, {passes} passes)", flush=True)
