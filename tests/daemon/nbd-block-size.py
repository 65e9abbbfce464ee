# cswap: a client that believes the plugin's block-size answer (libnbd).
# Run as: /usr/bin/python3 nbd-block-size.py URI
# The advertised maximum request must be one nbdkit serves: a read and a
# write of exactly that many bytes work, and one byte more is refused by
# the client before it is sent, leaving the connection usable.
# Prints TAP lines (the caller prints the plan); exits non-zero on any
# failure.
import errno
import sys

import nbd
import tap_lines
from tap_lines import ok

h = nbd.NBD()
h.connect_uri(sys.argv[1])
# The minimum block size is a hint (nbd-client.py): let an unaligned
# length through, so that what refuses max + 1 is its size.
h.set_strict_mode(h.get_strict_mode() & ~nbd.STRICT_ALIGN)
size = h.get_size()
maximum = h.get_block_size(nbd.SIZE_MAXIMUM)
print(f"# advertised maximum request: {maximum} bytes, export {size} bytes")
ok(0 < maximum < size, "the advertised maximum fits in the export")
if not 0 < maximum < size:
    # No request of that length can be in range (and one of 4 GiB would
    # be a buffer of 4 GiB here): what follows cannot be tried.
    sys.exit(1)


def attempt(what, call):
    """CALL's error, or None; the error is printed as a diagnostic."""
    try:
        call()
        return None
    except nbd.Error as e:
        print(f"# {what}: {e}")
        return e


# Same-filled pages: the write costs the store no memory.
pattern = b"\x5a" * maximum
ok(attempt("write of the maximum",
           lambda: h.pwrite(pattern, 0)) is None,
   "a write of the advertised maximum succeeds")
data = None


def read_maximum():
    global data
    data = h.pread(maximum, 0)


ok(attempt("read of the maximum", read_maximum) is None and data == pattern,
   "a read of the advertised maximum returns what was written")
del pattern, data

error = attempt("read of the maximum + 1", lambda: h.pread(maximum + 1, 0))
# libnbd's Error gives the errno by name ("ERANGE"); older ones a number.
code = error and (error.errno if isinstance(error.errno, str)
                  else errno.errorcode.get(error.errno))
ok(code == "ERANGE", "a read of the maximum + 1 is refused with ERANGE")
ok(h.aio_is_ready() and attempt("read after the refusal",
                                lambda: h.pread(4096, 0)) is None,
   "the connection still serves after the refusal")
h.shutdown()
sys.exit(1 if tap_lines.failed else 0)
