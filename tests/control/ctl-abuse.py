# cswap: bad clients on a control socket.  Prints "ok - NAME" or
# "not ok - NAME" lines for the caller to number.
#   ctl-abuse.py SOCKET
import json
import os
import select
import socket
import sys
import time

path = sys.argv[1]
MAX_CLIENTS = 64


def check(cond, name):
    print(("ok" if cond else "not ok") + " - " + name, flush=True)


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # Blocking, so that a full backlog makes connect wait, not fail.
    s.connect(path)
    s.settimeout(10)
    return s


def send(s, data):
    """Sends what the daemon takes: it may close on us mid-way."""
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


readers = {}


def readline(s):
    """One reply line; b"" once the daemon has closed the connection."""
    try:
        return readers.setdefault(s, s.makefile("rb")).readline()
    except (ConnectionResetError, socket.timeout):
        return b""


def close(s):
    """Closes S and its reader, which holds the descriptor open."""
    reader = readers.pop(s, None)
    if reader:
        reader.close()
    s.close()


def reply(line):
    try:
        o = json.loads(line)
        return o if isinstance(o, dict) and isinstance(o.get("ok"), bool) \
            else None
    except ValueError:
        return None


def is_error(line, want=""):
    o = reply(line)
    return o is not None and o["ok"] is False and want in o.get("error", "")


def request(data):
    s = connect()
    send(s, data)
    line = readline(s)
    close(s)
    return line


def stats_in_time(name):
    start = time.monotonic()
    o = reply(request(b"stats\n"))
    took = time.monotonic() - start
    check(o is not None and o["ok"] and took < 2,
          "%s (stats answered in %.3f s)" % (name, took))


silent = connect()              # connects and never sends
# Sends a byte now and then, never a whole line: bytes are not commands,
# and must not keep its slot for ever (issue 62, item 8).
trickler = connect()
stats_in_time("a client that never sends does not block others")
partial = connect()
send(partial, b"sta")           # half a line, then nothing
stats_in_time("a client that sends half a line does not block others")

for name, data, want in [
        ("empty line", b"\n", "empty line"),
        ("unknown command", b"frobnicate\n", "unknown command"),
        ("too many arguments", b"stats a b c\n", "usage"),
        ("a NUL byte", b"st\0ats\n", "control character"),
        ("binary garbage", os.urandom(3000).replace(b"\n", b"") + b"\n", ""),
        ("a 70 KiB line", b"x" * (70 * 1024) + b"\n", "line too long"),
]:
    check(is_error(request(data), want), "%s gets an error reply" % name)

s = connect()
send(s, b"x" * (70 * 1024))
first = readline(s)
check(is_error(first, "line too long") and readline(s) == b"",
      "after a line too long the daemon closes the connection")
close(s)

s = connect()
send(s, b"stats\nbogus\nhelp\n")
replies = [reply(readline(s)) for _ in range(3)]
check(all(replies) and [r["ok"] for r in replies] == [True, False, True],
      "three pipelined commands get three replies, in order")
close(s)

# 100 clients at once: each is served, refused with an error line, or
# closed; none hangs.
clients = [connect() for _ in range(100)]
for c in clients:
    send(c, b"stats\n")
served = refused = closed = 0
for c in clients:
    line = readline(c)
    if line == b"":
        closed += 1
    elif is_error(line, "too many clients"):
        refused += 1
    elif reply(line) and reply(line)["ok"]:
        served += 1
    close(c)
check(served + refused + closed == 100 and served <= MAX_CLIENTS - 2
      and refused >= 100 - (MAX_CLIENTS - 2),
      "100 clients at once: %d served, %d refused, %d closed"
      % (served, refused, closed))
stats_in_time("the daemon serves again once they are gone")

# The silent client is closed for idleness, 30 s after it connected, and
# so is the trickler, that sends a byte every 2 s meanwhile.
closed = {}
deadline = time.monotonic() + 45
while len(closed) < 2 and time.monotonic() < deadline:
    if trickler not in closed:
        send(trickler, b"s")
    for s in select.select([c for c in (silent, trickler)
                            if c not in closed], [], [], 2)[0]:
        closed[s] = readline(s)
check(is_error(closed.get(silent, b""), "idle timeout"),
      "a silent client is closed with \"idle timeout\"")
check(is_error(closed.get(trickler, b""), "idle timeout"),
      "a client that sends a byte every 2 s, never a line, is closed "
      "with \"idle timeout\" too")
close(partial)
close(silent)
close(trickler)
