# cswap: export-list=no keeps export names out of the log and the
# metrics, through libnbd and cswapctl.  Run as:
#   /usr/bin/python3 nbd-export-secrets.py SOCKET CTL_SOCKET CSWAPCTL OUT SECRET...
# against `nbdkit cswap size=4M export=SECRET1:128K export=SECRET2
# 'export-template=t-*' export-limit=128K export-idle-drop=1
# export-list=no`, with SECRET3 and SECRET4 names the template makes.
# Leaves what cswapctl showed in OUT/ (metrics, exports, exports.json)
# for the caller, which looks for the names there and in the log.
# Prints TAP lines (the caller prints the plan); exits non-zero on any
# failure.
import json
import os
import subprocess
import sys
import time

import nbd
import tap_lines
from export_clients import ExportClients
from tap_lines import ok

sock, ctl_sock, cswapctl, out = sys.argv[1:5]
quota, plain, made, idle = sys.argv[5:9]
connect = ExportClients(sock).connect


def ctl(*args):
    return subprocess.run([cswapctl, "--socket", ctl_sock, *args],
                          capture_output=True, text=True, timeout=30)


def exports(*name):
    return json.loads(ctl("--json", "exports", *name).stdout)["exports"]


def fill(h, pages):
    refused = 0
    for i in range(pages):
        try:
            h.pwrite(os.urandom(4096), i * 4096)
        except nbd.Error:
            refused += 1
    return refused


# Each kind of line that used to name an export: a quota refusal, a
# claim, a drop by command, an idle drop, a refused name.
h = connect(quota)
ok(fill(h, 64) > 0, "the quota export refuses writes over 128 KiB")
h.shutdown()
for name in (plain, made, idle):
    h = connect(name)
    fill(h, 4)
    h.shutdown()
try:
    connect(quota[:-1] + ("0" if quota[-1] != "0" else "1")).shutdown()
except nbd.Error:
    pass
deadline = time.monotonic() + 30
while any(e["clients"] for e in exports()) and time.monotonic() < deadline:
    time.sleep(0.05)

one = exports(plain)
ok(len(one) == 1 and one[0]["name"].startswith("#"),
   f"cswapctl exports NAME finds an export by its name and shows its id "
   f"({one and one[0]['name']})")
by_id = exports(one[0]["name"]) if one else []
ok(by_id == one, "cswapctl exports ID finds the same export")
dropped = ctl("exports", plain, "drop")
ok(dropped.returncode == 0 and exports(plain)[0]["pages_stored"] == 0,
   f"cswapctl exports NAME drop drops it (exit {dropped.returncode})")
h = connect(made)
fill(h, 4)
h.shutdown()
while exports(made)[0]["clients"] and time.monotonic() < deadline:
    time.sleep(0.05)
made_id = exports(made)[0]["name"]
dropped = ctl("exports", made_id, "drop")
ok(dropped.returncode == 0 and exports(made_id)[0]["pages_stored"] == 0,
   f"cswapctl exports ID drop drops a made export (exit {dropped.returncode})")
deadline = time.monotonic() + 30
while exports(idle)[0]["pages_stored"] and time.monotonic() < deadline:
    time.sleep(0.2)
ok(exports(idle)[0]["pages_stored"] == 0, "export-idle-drop=1 drops the idle one")

with open(os.path.join(out, "metrics"), "w") as f:
    f.write(ctl("metrics").stdout)
with open(os.path.join(out, "exports"), "w") as f:
    f.write(ctl("exports").stdout)
with open(os.path.join(out, "exports.json"), "w") as f:
    f.write(ctl("--json", "exports").stdout)
ok(len(exports()) == 4 and all(e["name"].startswith("#") for e in exports()),
   "cswapctl exports lists the four exports by id")
sys.exit(1 if tap_lines.failed else 0)
