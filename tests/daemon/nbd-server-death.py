# cswap: what a client of an export sees when the server dies: an error
# on its next request, not a hang.  Run as:
#   /usr/bin/python3 nbd-server-death.py PLUGIN DIR
# Starts its own nbdkit (the plugin, two exports) on DIR/death.sock,
# writes, kills the server with SIGKILL, and tries a read and a write.
# Prints TAP lines (the caller prints the plan).
import os
import signal
import subprocess
import sys
import threading
import time

import nbd
import tap_lines
from tap_lines import ok

plugin, work = sys.argv[1], sys.argv[2]
sock = os.path.join(work, "death.sock")
server = subprocess.Popen(["nbdkit", "-f", "-U", sock, plugin, "size=4M",
                           "export=one", "export=two", "ctl=none"],
                          stderr=subprocess.DEVNULL)
for _ in range(100):
    if os.path.exists(sock):
        break
    time.sleep(0.1)
h = nbd.NBD()
h.set_export_name("two")
h.connect_unix(sock)
h.pwrite(b"\x5a" * 4096, 4096)
ok(h.pread(4096, 4096) == b"\x5a" * 4096, "a write to export two reads back")
server.send_signal(signal.SIGKILL)
server.wait()

outcome = {}


def request(kind, call):
    try:
        call()
        outcome[kind] = "served"
    except nbd.Error as e:
        outcome[kind] = e.errno or str(e)


for kind, call in (("read", lambda: h.pread(4096, 4096)),
                   ("write", lambda: h.pwrite(b"\0" * 4096, 0))):
    t = threading.Thread(target=request, args=(kind, call), daemon=True)
    t.start()
    t.join(10)
    ok(kind in outcome and outcome[kind] != "served",
       f"after the server is killed, a {kind} fails at once "
       f"({outcome.get(kind, 'no answer in 10 s: a hang')})")
sys.exit(1 if tap_lines.failed else 0)
