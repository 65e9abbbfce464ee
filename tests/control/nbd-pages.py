# cswap: writes 256 known pages to an NBD server (write) or checks them
# (check): odd pages compressible text, even pages same-filled.
#   nbd-pages.py UNIX-SOCKET write|check
import sys

import nbd

PAGES = 256


def page(i):
    if i % 2:
        return ((b"cswap page %06d " % i) * 300)[:4096]
    return bytes([i % 255 + 1]) * 4096


h = nbd.NBD()
h.connect_unix(sys.argv[1])
if sys.argv[2] == "write":
    for i in range(PAGES):
        h.pwrite(page(i), i * 4096)
    h.flush()
else:
    for i in range(PAGES):
        assert h.pread(4096, i * 4096) == page(i), "page %d differs" % i
h.shutdown()
