#!/usr/bin/python3
"""cswap: floods a control socket for the pressure tests.

Usage: ctl-flood.py SOCKET SECONDS

Rounds until SECONDS are up: 100 clients connect at once; each sends one
kind of junk (binary noise, a 64 KiB line with no newline, an unknown
command, a half command then nothing, an empty line flood), reads what
comes back for up to 0.3 s, and closes.  Prints one JSON line with the
rounds, connections made, connections refused and replies read.  Never
fails on a closed or refused connection: that is the daemon's right.
"""
import json, os, random, select, socket, sys, time

path, seconds = sys.argv[1], float(sys.argv[2])
rng = random.Random(1)
junk = [
    lambda: os.urandom(rng.randrange(1, 4096)),
    lambda: b"x" * 65536,
    lambda: b"frobnicate the pool\n" * 10,
    lambda: b"writeback max=",
    lambda: b"\n" * 5000,
    lambda: b"set pool-limit \xff\xfe\n",
    lambda: b"stats\nstats\nstats\n" + os.urandom(100),
]
rounds = made = refused = replies = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    rounds += 1
    socks = []
    for _ in range(100):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
            made += 1
            socks.append(s)
        except (BlockingIOError, InterruptedError):
            made += 1
            socks.append(s)
        except OSError:
            refused += 1
            s.close()
    for s in socks:
        try:
            s.send(rng.choice(junk)())
        except OSError:
            pass
    deadline = time.monotonic() + 0.3
    live = list(socks)
    while live and time.monotonic() < deadline:
        ready, _, _ = select.select(live, [], [], 0.05)
        for s in ready:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if data:
                replies += 1
            else:
                live.remove(s)
    for s in socks:
        s.close()
    time.sleep(0.05)
print(json.dumps({"rounds": rounds, "connections": made,
                  "refused": refused, "replies": replies}))
