# cswap: the nbdkit plugin's window exports (daemon/nbdkit/nbd-window.h) through
# libnbd: each window a device of its own over a part of the one device,
# the same bytes seen through both, a window's edges kept, and the
# malformed names refused.
# Run as: /usr/bin/python3 nbd-window.py SOCKET PAGEFILE
# against `nbdkit cswap size=8M`.  Prints TAP lines (the caller prints the
# plan); exits non-zero on any failure.
import random
import subprocess
import sys

import nbd
import tap_lines
from tap_lines import ok

sock, corpus_path = sys.argv[1], sys.argv[2]
PAGE = 4096
SIZE = 8 << 20

data = subprocess.run(["zstd", "-dc", corpus_path], stdout=subprocess.PIPE,
                      check=True).stdout
pages = [data[i:i + PAGE] for i in range(0, min(len(data), 512 * PAGE), PAGE)]


def connect(name):
    h = nbd.NBD()
    h.set_export_name(name)
    h.connect_unix(sock)
    return h


def refused(name):
    try:
        connect(name).shutdown()
        return False
    except nbd.Error:
        return True


whole = connect("")
ok(whole.get_size() == SIZE, f"no name: the whole device ({whole.get_size()} bytes)")
other = connect("swap")
ok(other.get_size() == SIZE, "any other name: the whole device")
other.shutdown()

# Two windows side by side, as `cswap up` makes a ladder's first steps.
windows = [(1 << 20, 1 << 20), (2 << 20, 2 << 20)]
handles = [connect(f"window:{offset}:{length}") for offset, length in windows]
ok([h.get_size() for h in handles] == [length for _, length in windows],
   "each window is a device of its own length")

rng = random.Random(42)
model = {}                      # offset on the whole device -> page
for _ in range(400):
    w = rng.randrange(len(windows))
    offset, length = windows[w]
    at = rng.randrange(length // PAGE) * PAGE
    page = rng.choice(pages)
    if rng.random() < 0.5:
        handles[w].pwrite(page, at)
    else:
        whole.pwrite(page, offset + at)
    model[offset + at] = page
ok(all(whole.pread(PAGE, at) == page for at, page in model.items()),
   f"{len(model)} pages written through a window or the device read back "
   "the same through the device")
ok(all(handles[w].pread(PAGE, at - offset) == page
       for at, page in model.items()
       for w, (offset, length) in enumerate(windows)
       if offset <= at < offset + length),
   "and through their window")

# A window's edges: its last page is the device's, no further.
offset, length = windows[0]
handles[0].pwrite(b"\xa5" * PAGE, length - PAGE)
ok(whole.pread(PAGE, offset + length - PAGE) == b"\xa5" * PAGE
   and handles[1].pread(PAGE, 0) == whole.pread(PAGE, windows[1][0]),
   "a window's last page is the device's, and the next window starts after it")
try:
    handles[0].pwrite(b"\x5a" * PAGE, length, nbd.CMD_FLAG_FUA)
    beyond = False
except nbd.Error:
    beyond = True
ok(beyond and handles[1].pread(PAGE, 0) != b"\x5a" * PAGE,
   "a write past a window's end is refused, and the next window is untouched")
handles[0].trim(length, 0)
ok(whole.pread(length, offset) == bytes(length)
   and all(whole.pread(PAGE, at) == page for at, page in model.items()
           if not offset <= at < offset + length),
   "trimming a whole window zeros it and nothing else")

for h in handles:
    h.shutdown()
whole.shutdown()

for name, why in [("window:", "no fields"), ("window:4096", "no length"),
                  ("window:1:8192", "an offset not in whole pages"),
                  ("window:0:4097", "a length not in whole pages"),
                  ("window:0:4096", "a single page"),
                  (f"window:{SIZE - PAGE}:{2 * PAGE}", "past the device's end"),
                  (f"window:{SIZE}:{2 * PAGE}", "at the device's end"),
                  ("window:-4096:8192", "a sign"),
                  ("window:0x1000:8192", "hexadecimal"),
                  ("window:18446744073709547520:8192", "an offset near 2^64")]:
    ok(refused(name), f"refused: {name} ({why})")

sys.exit(1 if tap_lines.failed else 0)
