# cswap: drive the nbdkit plugin through a real NBD client (libnbd).
# Run as: /usr/bin/python3 nbd-client.py URI PAGEFILE
# Prints TAP test lines (the caller prints the plan); exits non-zero on
# any failure.
import json
import os
import random
import subprocess
import sys

import nbd
import tap_lines
from tap_lines import ok

uri, corpus_path = sys.argv[1], sys.argv[2]



def load_pages(path, limit):
    """First LIMIT pages of a page file (raw or zstd)."""
    import subprocess
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == b"\x28\xb5\x2f\xfd":
        proc = subprocess.run(["zstd", "-dc", path], stdout=subprocess.PIPE,
                              check=True)
        data = proc.stdout
    else:
        with open(path, "rb") as f:
            data = f.read()
    return [data[i * 4096:(i + 1) * 4096] for i in range(min(limit, len(data) // 4096))]


h = nbd.NBD()
h.add_meta_context(nbd.CONTEXT_BASE_ALLOCATION)
h.connect_uri(uri)
size = h.get_size()
ok(size == 64 * 1024 * 1024, f"size is 64 MiB ({size})")
ok(h.can_trim(), "can_trim")
ok(h.can_zero(), "can_zero")
ok(h.can_fast_zero(), "can_fast_zero")
ok(h.can_multi_conn(), "can_multi_conn")
ok(h.can_flush() and h.can_fua(), "can_flush and can_fua")
ok(not h.is_read_only(), "writable")
ok(h.get_block_size(nbd.SIZE_MINIMUM) == 512
   and h.get_block_size(nbd.SIZE_PREFERRED) == 4096,
   "block size hints: minimum 512, preferred 4096")

# The minimum block size is a hint: the plugin serves any alignment, so
# let libnbd send unaligned requests instead of refusing them itself.
h.set_strict_mode(h.get_strict_mode() & ~nbd.STRICT_ALIGN)

pages = load_pages(corpus_path, 4096)
rng = random.Random(1)
reference = bytearray(size)

# Whole pages at random page offsets, as swap writes them.
for i in range(2000):
    page = pages[rng.randrange(len(pages))]
    off = rng.randrange(size // 4096) * 4096
    h.pwrite(page, off, nbd.CMD_FLAG_FUA if i % 50 == 0 else 0)
    reference[off:off + 4096] = page
# Unaligned writes of any length, across page boundaries.
for i in range(500):
    ln = rng.randrange(1, 3 * 4096)
    off = rng.randrange(size - ln)
    data = os.urandom(ln) if i % 3 == 0 else bytes(pages[i % len(pages)][:ln].ljust(ln, b"\x5a"))
    h.pwrite(data, off)
    reference[off:off + ln] = data
mismatch = 0
for off in range(0, size, 1 << 20):
    if h.pread(1 << 20, off) != reference[off:off + (1 << 20)]:
        mismatch += 1
ok(mismatch == 0, "2000 page writes and 500 unaligned writes read back exact")

# Trim and zero: reads as zeros afterwards, unaligned edges included.
for i in range(200):
    ln = rng.randrange(1, 64 * 4096)
    off = rng.randrange(size - ln)
    if i % 2:
        h.trim(ln, off)
    else:
        h.zero(ln, off, nbd.CMD_FLAG_FAST_ZERO if i % 4 == 0 else 0)
    reference[off:off + ln] = bytes(ln)
ok(h.pread(size, 0) == reference, "trim and zero read back as zeros, the rest intact")


def block_status_pages():
    """Per page, whether base:allocation says it reads as zeros."""
    zero = [None] * (size // 4096)
    offset = 0
    while offset < size:
        got = []
        h.block_status(size - offset, offset,
                       lambda ctx, off, entries, err: got.extend(entries))
        for length, flags in zip(got[0::2], got[1::2]):
            for page in range(offset // 4096, min(size, offset + length) // 4096):
                zero[page] = bool(flags & nbd.STATE_ZERO)
            offset += length
    return zero


ok(h.can_meta_context(nbd.CONTEXT_BASE_ALLOCATION), "base:allocation is served")
status = block_status_pages()
wrong = [p for p in range(size // 4096)
         if status[p] != (reference[p * 4096:(p + 1) * 4096] == bytes(4096))]
ok(not wrong, f"block status: a page is zero exactly when it reads as zeros "
   f"({status.count(True)} zero pages, {len(wrong)} wrong)")

# A second connection sees the first one's writes at once (multi-conn).
h2 = nbd.NBD()
h2.connect_uri(uri)
h.pwrite(pages[7], 8192)
ok(h2.pread(4096, 8192) == pages[7], "a second connection reads the first's write")
h2.shutdown()

# Out of range: an error, and the server keeps serving.
for name, fn in [("read past the end", lambda: h.pread(4096, size)),
                 ("write past the end", lambda: h.pwrite(b"x" * 4096, size - 100)),
                 ("trim past the end", lambda: h.trim(8192, size - 4096)),
                 ("zero past the end", lambda: h.zero(8192, size - 4096))]:
    try:
        fn()
        ok(False, f"{name} is refused")
    except nbd.Error as e:
        ok(True, f"{name} is refused ({e.string.split(':')[0]})")
h.flush()
ok(h.pread(4096, 8192) == pages[7], "the device still serves after refused requests")

# nbdinfo --map on a known layout: data, a page written with zeros (no
# memory: a hole), data, then nothing.
data = [p for p in pages if p != bytes(4096)][:3]
h.trim(size, 0)
h.pwrite(data[0], 0)
h.pwrite(bytes(4096), 8192)
h.pwrite(data[1] + data[2], 16384)
mapped = json.loads(subprocess.run(["nbdinfo", "--map", "--json", uri],
                                   stdout=subprocess.PIPE, check=True).stdout)
layout = [(e["offset"], e["length"], e["type"]) for e in mapped]
expected = [(0, 4096, 0), (4096, 12288, 3), (16384, 8192, 0),
            (24576, size - 24576, 3)]
ok(layout == expected, f"nbdinfo --map: {layout}")

# Leave the device empty so the server's exit stats can be checked.
h.trim(size, 0)
ok(h.pread(size, 0) == bytes(size), "trim of the whole device reads as zeros")
h.shutdown()
sys.exit(1 if tap_lines.failed else 0)
