# cswap: what a claim from export-template= costs, through libnbd and
# nbdinfo.  Run as:
#   /usr/bin/python3 nbd-export-claims.py SOCKET CTL_SOCKET CSWAPCTL
# against `nbdkit cswap size=4M 'export-template=t-*'
# export-template-count=2 export-idle-drop=1`.  Prints TAP lines (the
# caller prints the plan); exits non-zero on any failure.
#
# In <= 0.9 every new name took one of the template's areas for good, an
# NBD_OPT_INFO probe or nbdinfo on a mistyped name too: a few junk
# connections locked the real tenant out until the server restarted.
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
clients = ExportClients(sock)
connect = clients.connect
refused = clients.refused


def probe(name):
    """NBD_OPT_INFO on NAME, as nbdinfo does before NBD_OPT_GO."""
    h = nbd.NBD()
    h.set_opt_mode(True)
    h.connect_unix(sock)
    h.set_export_name(name)
    try:
        h.opt_info()
    except nbd.Error:
        pass
    h.opt_abort()


def ctl(*args):
    return subprocess.run([cswapctl, "--socket", ctl_sock, *args],
                          capture_output=True, text=True, timeout=30)


def exports():
    return json.loads(ctl("--json", "exports").stdout)["exports"]


def names():
    return [e["name"] for e in exports()]


def settle():
    """Waits until the server has closed every client that shut down."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if sum(e["clients"] for e in exports()) == open_clients:
            return
        time.sleep(0.05)


# Junk: probes, nbdinfo, and clients that connect and leave, on names
# twice as many as the template's areas.
for i in range(4):
    probe(f"t-probe{i}")
for i in range(4):
    subprocess.run(["nbdinfo", f"nbd+unix:///t-typo{i}?socket={sock}"],
                   capture_output=True, timeout=30)
for i in range(4):
    connect(f"t-junk{i}").shutdown()
open_clients = 0
settle()
real = connect("t-real")
open_clients = 1
page = os.urandom(4096)
real.pwrite(page, 0)
ok(real.pread(4096, 0) == page,
   "after 12 junk probes and connections, the real tenant connects and writes")
real_id = contents_id(real)

other = connect("t-other")
other.pwrite(os.urandom(4096), 4096)
other.shutdown()
settle()
ok(refused("t-third"),
   "with both areas holding pages, a third name is refused")
dropped = ctl("exports", "t-other", "drop")
third = connect("t-third") if dropped.returncode == 0 else None
if third:
    third.pwrite(page, 8192)
ok(third is not None and third.pread(4096, 8192) == page
   and "t-other" not in names(),
   f"a dropped export's area is claimed by a new name, which writes "
   f"(drop: exit {dropped.returncode}; exports {names()})")
ok(real.pread(4096, 0) == page and contents_id(real) == real_id,
   "the real tenant's page and contents id are untouched")

# An open client holds its export's area even empty.
if third:
    third.trim(4096, 8192)
    third.shutdown()
settle()
empty = connect("t-empty")
empty_id = contents_id(empty)
ok(refused("t-fourth"),
   "an empty export a client has open keeps its area: a new name is refused")
empty.shutdown()
settle()
fourth = connect("t-fourth")
fourth.shutdown()
settle()
again = connect("t-empty")
ok(contents_id(again) == empty_id,
   "an empty export whose area was taken, claimed again with no drop "
   "between, keeps its contents id")
again.shutdown()
real.shutdown()

# Names the admin could not give to `cswapctl exports NAME drop`.
bad = ["t-two words", "t-tab\there", "t-line\nbreak", "t-bell\x07",
       "t-del\x7f"]
ok(all(refused(name) for name in bad),
   "names with a space or a control character are refused")
ok(not any(name in names() for name in bad), "and none is made an export")
sys.exit(1 if tap_lines.failed else 0)
