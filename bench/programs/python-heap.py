"""cswap bench: a Python program's heap under memory pressure.

usage: python3 python-heap.py MIB

Builds about MIB MiB of ordinary Python objects (dicts of strings,
integers, lists and floats, as a program that loads records would), then
reads half of the records back in random order and updates them, the way
a program that works on its data after loading it does.  Checks its own
result: a checksum computed while building must equal the one recomputed
from the records at the end.  Exit status 0 when it does, 1 when not.
Deterministic (a fixed seed), so every device gets the same work.
"""

import random
import sys
import zlib

WORDS = ("alpha beta gamma delta epsilon zeta theta kappa lambda omicron "
         "sigma tau upsilon omega north south east west red green blue "
         "amber ivory coral swap page memory kernel device block").split()
BYTES_PER_RECORD = 1000     # measured: one record below, in CPython 3.11


def make_record(rng, i):
    name = " ".join(rng.choice(WORDS) for _ in range(6))
    return {
        "id": i,
        "name": name,
        "email": f"user{i}@example.{rng.choice(WORDS)}.org",
        "scores": [rng.randrange(1000) for _ in range(12)],
        "weight": rng.random() * 100.0,
        "tags": {rng.choice(WORDS): rng.randrange(100) for _ in range(3)},
        "note": f"{i:08d}:" + rng.choice(WORDS) * rng.randrange(4, 12),
    }


def digest(record):
    text = "%d|%s|%s|%s|%.6f|%s|%s" % (
        record["id"], record["name"], record["email"], record["scores"],
        record["weight"], sorted(record["tags"].items()), record["note"])
    return zlib.crc32(text.encode())


def main():
    mib = int(sys.argv[1])
    rng = random.Random(20261130)
    count = mib * 1024 * 1024 // BYTES_PER_RECORD
    records = []
    expected = 0
    for i in range(count):
        record = make_record(rng, i)
        records.append(record)
        expected ^= digest(record)

    # Work on half the records in random order: each update is undone in
    # the checksum the same way, so the total must still match.
    for i in rng.sample(range(count), count // 2):
        record = records[i]
        expected ^= digest(record)
        record["scores"].append(len(record["name"]))
        record["weight"] += 1.0
        expected ^= digest(record)

    actual = 0
    for record in records:
        actual ^= digest(record)
    if actual != expected:
        print(f"python-heap: checksum {actual:#x} != {expected:#x}")
        return 1
    print(f"python-heap: {count} records, checksum {actual:#x} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
