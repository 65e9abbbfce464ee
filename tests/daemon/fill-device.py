#!/usr/bin/python3
"""Writes incompressible pages over the whole NBD device at URI, page by
page; a write may fail only with ENOSPC.  Prints how many were refused."""
import errno
import os
import sys

import nbd

h = nbd.NBD()
h.connect_uri(sys.argv[1])
refused = 0
for page in range(h.get_size() // 4096):
    try:
        h.pwrite(os.urandom(4096), page * 4096)
    except nbd.Error as e:
        if e.errnum != errno.ENOSPC:
            raise
        refused += 1
print(refused)
