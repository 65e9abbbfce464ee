# cswap: exports made from export-template= through libnbd.  Run as:
#   /usr/bin/python3 nbd-export-template.py SOCKET
# against `nbdkit cswap size=4M export=alpha export-template=client-*
# export-template-count=3 export-limit=128K`.  Prints TAP lines (the
# caller prints the plan); exits non-zero on any failure.
import os
import sys
import threading

import nbd
import tap_lines
from export_clients import ExportClients
from tap_lines import ok

sock = sys.argv[1]
clients = ExportClients(sock)
connect = clients.connect
refused = clients.refused


def listed():
    h = nbd.NBD()
    h.set_opt_mode(True)
    h.connect_unix(sock)
    names = []
    h.opt_list(lambda name, description: names.append(name) or 0)
    h.opt_abort()
    return names


ok(listed() == ["alpha"], "before any claim, the list is the configured export")
ok(refused("other"), "a name that does not match the template is refused")
pages = {name: os.urandom(4096) for name in ("client-a", "client-b")}
for name, page in pages.items():
    h = connect(name)
    h.pwrite(page, 0)
    h.shutdown()
ok(listed() == ["alpha", "client-a", "client-b"],
   "two names that match are made exports, and listed")

# Four clients open one new name at once: one export, shared.
handles, errors = [], []


def open_z():
    try:
        handles.append(connect("client-z"))
    except nbd.Error as e:
        errors.append(str(e))


threads = [threading.Thread(target=open_z) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
page = os.urandom(4096)
if handles:
    handles[0].pwrite(page, 8192)
ok(not errors and len(handles) == 4
   and all(h.pread(4096, 8192) == page for h in handles),
   f"four clients naming client-z at once share one export {errors}")
for h in handles:
    h.shutdown()
ok(listed() == ["alpha", "client-a", "client-b", "client-z"],
   "client-z is listed once")
ok(refused("client-c"), "once the template's 3 exports are taken, a fourth is refused")

bad = 0
for name, page in pages.items():
    h = connect(name)
    bad += h.pread(4096, 0) != page
    h.shutdown()
ok(bad == 0, "reconnected, each made export reads back its own page")

h = connect("client-b")
refusals = 0
for i in range(256):
    try:
        h.pwrite(os.urandom(4096), i * 4096)
    except nbd.Error as e:
        if e.errno != "ENOSPC":
            raise
        refusals += 1
h.shutdown()
ok(30 <= refusals <= 256 - 30,
   f"a made export has export-limit's quota of 128 KiB: {refusals} of 256 raw "
   "pages refused with ENOSPC")
sys.exit(1 if tap_lines.failed else 0)
