# cswap: the nbdkit plugin's exports (export=NAME[:LIMIT]) through libnbd.
# Run as: /usr/bin/python3 nbd-exports.py SOCKET PAGEFILE [PSKFILE WRONGPSK]
# against `nbdkit cswap size=8M export=alpha export=beta export=gamma:256K`.
# With PSKFILE the server requires TLS-PSK, and the client is user "alice"
# in that file; WRONGPSK gives alice another key.  Prints TAP lines (the caller prints the plan); exits
# non-zero on any failure.
import random
import subprocess
import sys
import threading

import nbd
import tap_lines
from tap_lines import ok

sock, corpus_path = sys.argv[1], sys.argv[2]
psk = sys.argv[3] if len(sys.argv) > 3 else None
wrong_psk = sys.argv[4] if len(sys.argv) > 4 else None
SIZE = 8 << 20
QUOTA = 256 << 10
NAMES = ["alpha", "beta", "gamma"]



def connect(name, key=psk, user="alice", tls=True):
    h = nbd.NBD()
    if key and tls:
        h.set_tls(nbd.TLS_REQUIRE)
        h.set_tls_psk_file(key)
        h.set_tls_username(user)
    h.set_export_name(name)
    h.connect_unix(sock)
    return h


def refused(name, **kw):
    try:
        connect(name, **kw).shutdown()
        return False
    except nbd.Error:
        return True


data = subprocess.run(["zstd", "-dc", corpus_path], stdout=subprocess.PIPE,
                      check=True).stdout
pages = [data[i:i + 4096] for i in range(0, min(len(data), 4096 * 4096), 4096)]

# The list a client sees, and the default export.
h = nbd.NBD()
if psk:
    h.set_tls(nbd.TLS_REQUIRE)
    h.set_tls_psk_file(psk)
    h.set_tls_username("alice")
h.set_opt_mode(True)
h.connect_unix(sock)
listed = []
h.opt_list(lambda name, description: listed.append(name) or 0)
h.opt_abort()
ok(listed == NAMES, f"the server lists the configured exports: {listed}")
ok(refused("delta"), "an export that is not configured is refused")

# Each export its own device: random pages from one writer thread each,
# against a reference of its own.
references = {name: bytearray(SIZE) for name in NAMES}
refusals = {name: 0 for name in NAMES}
errors = []


def writer(name, seed):
    rng = random.Random(seed)
    h = connect(name)
    ref = references[name]
    try:
        for i in range(1500):
            off = rng.randrange(SIZE // 4096) * 4096
            page = pages[rng.randrange(len(pages))]
            try:
                h.pwrite(page, off)
                ref[off:off + 4096] = page
            except nbd.Error as e:
                if e.errno != "ENOSPC":
                    raise
                refusals[name] += 1
            if i % 10 == 0:
                h.trim(4096, off)
                ref[off:off + 4096] = bytes(4096)
        h.shutdown()
    except Exception as e:          # noqa: BLE001 - reported below
        errors.append(f"{name}: {e}")


threads = [threading.Thread(target=writer, args=(n, i)) for i, n in enumerate(NAMES)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ok(not errors, f"three writers, one an export each: no error but ENOSPC {errors}")
ok(refusals["alpha"] == 0 and refusals["beta"] == 0,
   "the exports without a quota refused no write")
ok(refusals["gamma"] > 0,
   f"gamma, with a 256 KiB quota, refused {refusals['gamma']} writes with ENOSPC")


def mismatches(name):
    h = connect(name)
    bad = sum(1 for off in range(0, SIZE, 1 << 20)
              if h.pread(1 << 20, off) != references[name][off:off + (1 << 20)])
    h.shutdown()
    return bad


# After every connection closed, a new one finds every page as written.
bad = {name: mismatches(name) for name in NAMES}
ok(all(v == 0 for v in bad.values()),
   f"reconnected, every export reads back as its own writer left it {bad}")

# The default export (a client that names none) is the first one.
h = connect("")
ok(h.pread(1 << 20, 0) == references["alpha"][:1 << 20],
   "a client that names no export is served alpha, the first")
h.shutdown()

if psk:
    ok(refused("alpha", tls=False), "without TLS, the server refuses the client")
    ok(refused("alpha", user="mallory"),
       "a user that is not in the key file is refused")
    ok(refused("alpha", key=wrong_psk), "alice with the wrong key is refused")

print(f"# refusals {refusals}")
sys.exit(1 if tap_lines.failed else 0)
