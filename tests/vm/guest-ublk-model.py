#!/usr/bin/python3
# cswap: tests/vm/guest-ublk-model.py — inside a tests/vm/cswap-vm guest
# whose kernel has ublk: a model test of cswap-ublk's block device.
#
# usage (in the guest, as root): guest-ublk-model.py CSWAP_UBLK [OPS [SEED]]
#
# Starts CSWAP_UBLK over two windows of one store, as `cswap up`'s ladder
# does (a 48 MiB device and a 16 MiB one, served by the same queue
# threads, a pool limit well above them), then runs OPS random operations
# against them and against a reference each (a bytearray of the device),
# each operation on either device: direct-I/O reads and writes of 1 to 64 pages
# at random page offsets (the writes: corpus-like data, zero pages and
# same-filled pages), discards (BLKDISCARD) and write-zeroes (BLKZEROOUT)
# of random page ranges; every read must equal the reference.  Between
# them, requests the block layer must refuse: a read and a write not
# aligned to the 4 KiB logical block, and a read past the end; each must
# fail with EINVAL (or read 0 bytes past the end) and the device keep
# serving.  At the end each whole device is read back and compared, the
# daemon is stopped with SIGTERM and must exit 0 and delete its devices.
# Prints TAP.
import errno
import fcntl
import mmap
import os
import random
import signal
import struct
import subprocess
import sys
import time

PAGE = 4096
SIZES = [48 << 20, 16 << 20]            # the windows, in the store's order
BLKDISCARD = 0x1277
BLKZEROOUT = 0x127F

daemon_path = sys.argv[1]
ops = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
seed = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
rng = random.Random(seed)
print(f"# seed {seed}, {ops} operations")
results = []


def check(name, ok):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}", flush=True)
    return ok


windows = ",".join(f"{sum(SIZES[:i])}:{size}" for i, size in enumerate(SIZES))
daemon = subprocess.Popen([daemon_path, "--size", str(sum(SIZES)),
                           "--windows", windows, "-o", "pool-limit=256M",
                           "-o", "ctl=/run/ublk-model.sock"],
                          stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
devices = [daemon.stdout.readline().strip() for _ in SIZES]
if not check(f"cswap-ublk serves a block device per window ({' '.join(devices)})",
             all(d.startswith("/dev/ublkb") for d in devices)
             and len(set(devices)) == len(SIZES)):
    daemon.kill()
    sys.exit(1)
fds = [os.open(device, os.O_RDWR | os.O_DIRECT) for device in devices]
check("each device is its window's size",
      [os.lseek(fd, 0, os.SEEK_END) for fd in fds] == SIZES)
references = [bytearray(size) for size in SIZES]
# O_DIRECT wants an aligned buffer: an anonymous mapping is page aligned.
buf = mmap.mmap(-1, 64 * PAGE)
mismatches = 0


def fill(pages):
    kind = rng.random()
    if kind < 0.2:
        return bytes(pages * PAGE)
    if kind < 0.35:
        return bytes([rng.randrange(256)]) * (pages * PAGE)
    # Compressible but not trivial: a few random words repeated.
    words = [rng.randbytes(8) for _ in range(16)]
    return b"".join(rng.choice(words) for _ in range(pages * PAGE // 8))


def read_range(fd, offset, length):
    view = memoryview(buf)[:length]
    n = os.preadv(fd, [view], offset)
    return bytes(view[:n])


def refused_with_einval(request):
    try:
        request()
    except OSError as e:
        return e.errno == errno.EINVAL
    return False


refusals = []
for i in range(ops):
    which = rng.randrange(len(SIZES))
    fd, reference, size = fds[which], references[which], SIZES[which]
    op = rng.random()
    pages = rng.randint(1, 64)
    first = rng.randrange(size // PAGE - pages + 1)
    offset, length = first * PAGE, pages * PAGE
    if op < 0.4:
        data = fill(pages)
        buf[:length] = data
        n = os.pwritev(fd, [memoryview(buf)[:length]], offset)
        if n != length:
            check(f"write of {length} at {offset} wrote {n}", False)
        reference[offset:offset + length] = data
    elif op < 0.8:
        if read_range(fd, offset, length) != reference[offset:offset + length]:
            mismatches += 1
            print(f"# read of {length} at {offset} of {devices[which]} "
                  "differs from the reference")
    elif op < 0.9:
        fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", offset, length))
        reference[offset:offset + length] = bytes(length)
    else:
        fcntl.ioctl(fd, BLKZEROOUT, struct.pack("QQ", offset, length))
        reference[offset:offset + length] = bytes(length)
    if i % 500 == 250:
        # Requests the block layer refuses; the device serves on.
        refusals.append(refused_with_einval(
            lambda: os.preadv(fd, [memoryview(buf)[:512]], offset)))
        refusals.append(refused_with_einval(
            lambda: os.pwritev(fd, [memoryview(buf)[:PAGE]], offset + 512)))
        refusals.append(os.preadv(fd, [memoryview(buf)[:PAGE]], size) == 0)

check(f"{ops} random reads, writes, discards and write-zeroes: every read "
      f"equal to the reference", mismatches == 0)
check(f"{len(refusals)} unaligned or past-the-end requests refused "
      "(EINVAL, or nothing read)", refusals and all(refusals))
for device, fd, reference, size in zip(devices, fds, references, SIZES):
    # In pieces: the guest's 256 MiB hold the references and the store.
    same = all(read_range(fd, offset, 64 * PAGE)
               == reference[offset:offset + 64 * PAGE]
               for offset in range(0, size, 64 * PAGE))
    check(f"the whole of {device} reads back as its reference", same)
    os.close(fd)
daemon.send_signal(signal.SIGTERM)
try:
    rc = daemon.wait(timeout=30)
except subprocess.TimeoutExpired:
    daemon.kill()
    rc = None
check("SIGTERM stops the daemon, exit 0", rc == 0)
check("the daemon deleted its devices",
      not any(os.path.exists(device) for device in devices))
print(f"1..{len(results)}")
sys.exit(0 if all(results) else 1)
