# cswap: dropping an export, by command and by export-idle-drop=, through
# libnbd and cswapctl.  Run as:
#   /usr/bin/python3 nbd-export-drop.py SOCKET CTL_SOCKET CSWAPCTL
# against `nbdkit cswap size=4M export=alpha export=beta 'export=q"uo\te'
# export-idle-drop=2`.  Prints TAP lines (the caller prints the plan);
# exits non-zero on any failure.
import json
import os
import subprocess
import sys
import time

import nbd
import tap_lines
from export_clients import ExportClients, contents_id
from tap_lines import ok

sock, ctl_sock, cswapctl = sys.argv[1:4]
connect = ExportClients(sock).connect
PAGES = 64


def ctl(*args):
    return subprocess.run([cswapctl, "--socket", ctl_sock, *args],
                          capture_output=True, text=True, timeout=30)


def pages_stored(name):
    reply = ctl("--json", "exports", name)
    return json.loads(reply.stdout)["exports"][0]["pages_stored"]


def fill(h):
    # Half random, half same-filled: both kinds must go.
    data = b"".join(os.urandom(4096) if i % 2 else bytes([i]) * 4096
                    for i in range(PAGES))
    h.pwrite(data, 0)
    return data


metrics = ctl("metrics").stdout
ok('cswap_export_pages_stored{export="q\\"uo\\\\te"} 0' in metrics,
   "metrics: a quote and a backslash in an export's name are escaped "
   "in its label")

alpha = connect("alpha")
alpha_data = fill(alpha)
held = pages_stored("alpha")
busy = ctl("exports", "alpha", "drop")
ok(busy.returncode == 1 and "is open (1 client(s))" in busy.stderr
   and pages_stored("alpha") == held == PAGES,
   f"an export a client has open is not dropped: exit {busy.returncode}, "
   f"{busy.stderr.strip()!r}, {held} pages held")

beta = connect("beta")
fill(beta)
beta_id = contents_id(beta)
beta.shutdown()
beta = connect("beta")
ok(contents_id(beta) == beta_id and len(beta_id) == 16,
   f"a client that connects again sees the same contents id ({beta_id})")
beta.shutdown()
alpha_id = contents_id(alpha)
dropped = ctl("exports", "beta", "drop")
ok(dropped.returncode == 0 and pages_stored("beta") == 0,
   f"once its client left, cswapctl exports beta drop frees its pages "
   f"(exit {dropped.returncode}, {pages_stored('beta')} left)")
beta = connect("beta")
ok(beta.pread(PAGES * 4096, 0) == bytes(PAGES * 4096),
   "a client of the dropped export reads zeros")
ok(contents_id(beta) != beta_id and contents_id(alpha) == alpha_id,
   f"and sees a new contents id ({contents_id(beta)}, was {beta_id}); "
   f"the other export's is unchanged")
ok(alpha.pread(PAGES * 4096, 0) == alpha_data and pages_stored("alpha") == PAGES,
   "the other export's pages are untouched, its client still connected")

wrong = ctl("exports", "beta", "frob")
ok(wrong.returncode == 1 and "exports NAME [drop]" in wrong.stderr,
   f"exports NAME frob is refused: {wrong.stderr.strip()!r}")
unknown = ctl("exports", "delta", "drop")
ok(unknown.returncode == 1 and "no export named delta" in unknown.stderr,
   f"dropping an unknown export is refused: {unknown.stderr.strip()!r}")

# export-idle-drop=2: beta, left alone, goes; alpha, open, stays.
fill(beta)
beta.shutdown()
deadline = time.monotonic() + 15
while pages_stored("beta") and time.monotonic() < deadline:
    time.sleep(0.5)
ok(pages_stored("beta") == 0,
   "export-idle-drop=2: an export no client had open for 2 s is dropped")
ok(alpha.pread(PAGES * 4096, 0) == alpha_data and pages_stored("alpha") == PAGES,
   "an export a client has open all along is kept, however idle")
alpha.shutdown()
beta = connect("beta")
fill(beta)
time.sleep(0.5)
ok(pages_stored("beta") == PAGES and beta.pread(4096, 4096) != bytes(4096),
   "a client reconnecting finds the dropped export working, its new pages kept")
beta.shutdown()
sys.exit(tap_lines.failed != 0)
