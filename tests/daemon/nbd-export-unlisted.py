# cswap: export-list=no, where export names are secrets, through libnbd.
# Run as:
#   /usr/bin/python3 nbd-export-unlisted.py SOCKET SECRET
# against `nbdkit cswap size=4M export=SECRET export=OTHER-SECRET
# 'export-template=t-*' export-list=no`.  Prints TAP lines (the caller
# prints the plan); exits non-zero on any failure.
import sys

import nbd
import tap_lines
from export_clients import ExportClients
from tap_lines import ok

sock, secret = sys.argv[1:3]
clients = ExportClients(sock)
connect = clients.connect
refused = clients.refused

lister = nbd.NBD()
lister.set_opt_mode(True)
lister.connect_unix(sock)
names = []
lister.opt_list(lambda name, description: names.append(name))
lister.opt_abort()
ok(names == [], f"NBD_OPT_LIST shows no export (listed: {names})")
ok(refused(""), "a client that names no export is refused: there is no default")
ok(refused(secret[:-1] + ("0" if secret[-1] != "0" else "1")),
   "a name one character off the secret is refused")

owner = connect(secret)
page = bytes(range(256)) * 16
owner.pwrite(page, 0)
ok(owner.pread(4096, 0) == page, "the secret name opens its export, which keeps a page")
mine = connect("t-mine")
ok(mine.pread(4096, 0) == bytes(4096),
   "a client's export made from the template is its own: zeros, not that page")
owner.shutdown()
mine.shutdown()
sys.exit(tap_lines.failed != 0)
