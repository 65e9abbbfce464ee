#!/usr/bin/python3
# cswap: tests/vm/guest-swap-holder.py — inside a tests/vm/cswap-vm guest:
# a process with pages in swap, told what to do one line at a time.
#
# usage (in the guest): guest-swap-holder.py MIB   (commands on stdin)
#
# Each page of its regions holds its region's seed and its index, so a
# page read back is either right or visibly wrong (zeros, another page).
# Commands, each answered with one line on stdout:
#   out NAME     fill a new region NAME of MIB and page it out
#                (MADV_PAGEOUT): "swapped KIB" (VmSwap after)
#   check NAME   read every page of NAME back in this process:
#                "ok" or "wrong PAGE" (a read that fails kills it: SIGBUS)
#   probe NAME N read N pages of NAME spread over it, each in a child of
#                its own: "intact I sigbus S wrong W" (a child killed by
#                SIGBUS is a page the kernel could not read back)
#   quit
# Made for guest-ublk-leftovers: pages swapped to a cswap-ublk device
# whose daemon is killed and taken over are lost, and must fail (SIGBUS),
# never read back as other bytes.
import mmap
import os
import signal
import struct
import sys

PAGE = 4096
MADV_PAGEOUT = getattr(mmap, "MADV_PAGEOUT", 21)   # Linux 5.4; not in every Python
mib = int(sys.argv[1])
regions = {}


def page_bytes(seed, index):
    return struct.pack("<QQ", seed, index) * (PAGE // 16)


def vm_swap_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmSwap:"):
            return int(line.split()[1])
    return -1


def page_out(name):
    pages = mib * 256
    m = mmap.mmap(-1, pages * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    seed = len(regions) + 1
    for i in range(pages):
        m[i * PAGE:(i + 1) * PAGE] = page_bytes(seed, i)
    regions[name] = (m, seed, pages)
    m.madvise(MADV_PAGEOUT)
    return "swapped %d" % vm_swap_kib()


def check(name):
    m, seed, pages = regions[name]
    for i in range(pages):
        if m[i * PAGE:(i + 1) * PAGE] != page_bytes(seed, i):
            return "wrong %d" % i
    return "ok"


def probe(name, count):
    m, seed, pages = regions[name]
    counts = {"intact": 0, "sigbus": 0, "wrong": 0}
    for k in range(count):
        i = k * pages // count
        pid = os.fork()
        if pid == 0:
            os._exit(0 if m[i * PAGE:(i + 1) * PAGE] == page_bytes(seed, i) else 1)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGBUS:
            counts["sigbus"] += 1
        elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            counts["intact"] += 1
        else:
            counts["wrong"] += 1
    return "intact %(intact)d sigbus %(sigbus)d wrong %(wrong)d" % counts


for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    if words[0] == "out":
        answer = page_out(words[1])
    elif words[0] == "check":
        answer = check(words[1])
    elif words[0] == "probe":
        answer = probe(words[1], int(words[2]))
    else:
        answer = "unknown " + words[0]
    print(answer, flush=True)
