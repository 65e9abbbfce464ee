#!/usr/bin/python3
"""cswap: no thread that serves I/O waits on stderr (issue 62, item 1).

The daemon's stderr is a pipe whose buffer is full and never read while
the device fills, so that any write(2) to it blocks, as a write to a log
file on a tmpfs whose page is in swap on the device itself does (the
machine then hangs: the writer waits for a swap-in it serves).  Writes of
incompressible data go through the device (O_DIRECT on cswap-fuse's file,
or libnbd to the nbdkit plugin) until the pool, at its limit, refuses them:
each write must end, stored or refused with ENOSPC, within BOUND_S (a hang
detector, not a timing: it fails only if a thread is stuck), and every
chunk stored must read back equal.  Then the pipe is read again: the
"device full" warning must arrive, as it did before.

Last, SIGTERM: the daemon stops cleanly, the drain's lines written before
its exit stats line.

Usage: stderr-blocked.py fuse-classic|fuse-uring|fuse-auto-off|nbd|ublk
  fuse-classic   cswap-fuse --transport classic (libfuse's threads)
  fuse-uring     cswap-fuse --transport uring (enable_uring switched on)
  fuse-auto-off  cswap-fuse, enable_uring off: its read/write threads
  nbd            nbdkit -U SOCKET with the plugin (no kernel nbd needed)
  ublk           cswap-ublk --no-standby, O_DIRECT on its /dev/ublkbN (a
                 kernel with ublk: tests/vm/test-vm-ublk.sh runs it there)
Prints TAP.  Before the fix the serving thread blocked in write(2, …) of
the warning; the test then shows that thread and fails at the bound.
"""
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "fuse-classic"
BOUND_S = 60
SIZE = 64 << 20
POOL_LIMIT = "2M"
CHUNK = 64 << 10
ENABLE_URING = "/sys/module/fuse/parameters/enable_uring"
ENABLE_URING_LOCK = os.environ.get("ENABLE_URING_LOCK",
                                   "/run/lock/cswap-enable-uring.lock")
BUILD = os.environ.get("CSWAP_BUILD_ROOT", "")
count = 0
failed = 0


def ok(cond, name):
    global count, failed
    count += 1
    failed += not cond
    print(f"{'' if cond else 'not '}ok {count} - {name}", flush=True)


def diag(text):
    for line in text.splitlines():
        print(f"# {line}", flush=True)


def skip(why):
    print(f"1..0 # SKIP {why}", flush=True)
    sys.exit(0)


# The client, run as a child so that a write stuck in the kernel (waiting
# for a daemon thread stuck on stderr) can be bounded and killed.  It
# writes until REFUSALS writes were refused or the device ends, then reads
# back every chunk stored; prints {"stored", "refused", "other", "bad"}.
CLIENT = r'''
import errno, hashlib, json, mmap, os, sys
mode, target, size, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
REFUSALS = 4
if mode == "nbd":
    import nbd
    h = nbd.NBD()
    h.connect_unix(target)
    def write(buf, off):
        try:
            h.pwrite(bytes(buf), off)
            return 0
        except nbd.Error as e:
            return e.errnum
    def read(off):
        return h.pread(chunk, off)
else:
    fd = os.open(target, os.O_RDWR | os.O_DIRECT)
    def write(buf, off):
        try:
            os.pwritev(fd, [buf], off)
            return 0
        except OSError as e:
            return e.errno
    def read(off):
        rbuf = mmap.mmap(-1, chunk)
        n = os.preadv(fd, [rbuf], off)
        return bytes(rbuf[:n])
buf = mmap.mmap(-1, chunk)          # page-aligned, as O_DIRECT needs
stored, refused, other = {}, 0, []
for off in range(0, size, chunk):
    data = os.urandom(chunk)
    buf[:] = data
    r = write(buf, off)
    if r == 0:
        stored[off] = hashlib.sha256(data).hexdigest()
    elif r == errno.ENOSPC:
        refused += 1
        if refused >= REFUSALS:
            break
    else:
        other.append(r)
print(json.dumps({"phase": "written"}), flush=True)
bad = [off for off, digest in stored.items()
       if hashlib.sha256(read(off)).hexdigest() != digest]
print(json.dumps({"stored": len(stored), "refused": refused,
                  "other": other, "bad": bad}), flush=True)
'''


def client(target, timeout, on_timeout):
    """Runs CLIENT against TARGET: its result, or None after TIMEOUT s,
    once ON_TIMEOUT has run (it must unblock the daemon: a FUSE request
    already taken by the daemon keeps its writer until answered, even
    killed)."""
    child = subprocess.Popen(
        ["/usr/bin/python3", "-c", CLIENT, "nbd" if MODE == "nbd" else "fuse",
         target, str(SIZE), str(CHUNK)], stdout=subprocess.PIPE, text=True)
    try:
        out, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        on_timeout()
        child.kill()
        child.communicate()
        return None
    if child.returncode != 0:
        diag(f"the client exited {child.returncode}: {out}")
        return None
    return json.loads(out.strip().splitlines()[-1])


def fill_pipe(write_fd):
    """Fills the pipe behind WRITE_FD through another open file description
    (O_NONBLOCK there leaves the daemon's blocking)."""
    fd = os.open(f"/proc/self/fd/{write_fd}", os.O_WRONLY | os.O_NONBLOCK)
    filled = 0
    for size in (4096, 1):
        try:
            while True:
                filled += os.write(fd, b"#" * size)
        except BlockingIOError:
            pass
    os.close(fd)
    return filled


def show_blocked_writers(pid):
    """Diag lines for the daemon's threads waiting in write(2) to fd 2."""
    found = False
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        base = f"/proc/{pid}/task/{tid}"
        try:
            syscall = open(f"{base}/syscall").read().split()
            comm = open(f"{base}/comm").read().strip()
            wchan = open(f"{base}/wchan").read().strip()
        except OSError:
            continue
        if syscall[:2] == ["1", "0x2"]:
            found = True
            diag(f"daemon thread {tid} ({comm}) blocked in write(2, …, "
                 f"{int(syscall[3], 16)}) at {wchan}")
    if not found:
        diag("no daemon thread is in write(2) to stderr")


class Reader(threading.Thread):
    """Reads the daemon's stderr once the writes are over, to its end."""

    def __init__(self, fd):
        super().__init__(daemon=True)
        self.fd, self.text, self.lock = fd, b"", threading.Lock()

    def run(self):
        while True:
            data = os.read(self.fd, 65536)
            if not data:
                return
            with self.lock:
                self.text += data

    def wait_for(self, needle, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if needle in self.text:
                    return True
            time.sleep(0.1)
        return False


def plugin_env():
    """nbdkit's environment: in a sanitizer build, the runtimes the plugin
    needs preloaded, leak checks off (as tests/lib/sanitizer-env.sh)."""
    env = dict(os.environ)
    sanitize = os.environ.get("CSWAP_SANITIZE", "none")
    libs = [subprocess.run([os.environ.get("CC", "cc"),
                            f"-print-file-name={lib}"], check=True, text=True,
                           stdout=subprocess.PIPE).stdout.strip()
            for kind, lib in (("address", "libasan.so"),
                              ("thread", "libtsan.so"),
                              ("undefined", "libubsan.so"))
            if kind in sanitize]
    if libs:
        env["LD_PRELOAD"] = ":".join(libs)
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"
    return env


def take_enable_uring(value):
    """Switches FUSE over io_uring to VALUE under the tests' lock (as
    tests/lib/enable-uring.sh); returns what to put back, or skips."""
    if not os.access(ENABLE_URING, os.W_OK):
        skip(f"cannot switch {ENABLE_URING}")
    lock = open(ENABLE_URING_LOCK, "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    saved = open(ENABLE_URING).read().strip()
    with open(ENABLE_URING, "w") as f:
        f.write(value)
    if open(ENABLE_URING).read().strip() != value:
        skip(f"{ENABLE_URING} does not take {value}")
    return lock, saved


def main():
    if os.geteuid() != 0 and MODE != "nbd":
        skip("mounting the device file needs root")
    if MODE == "nbd":
        try:
            import nbd  # noqa: F401
        except ImportError:
            skip("libnbd's Python bindings (python3-libnbd) are not installed")
        if subprocess.run(["sh", "-c", "command -v nbdkit"],
                          stdout=subprocess.DEVNULL).returncode:
            skip("nbdkit is not installed")
    elif MODE == "ublk":
        if not os.path.exists("/dev/ublk-control"):
            skip("no /dev/ublk-control (ublk_drv not loaded)")
    elif not os.path.exists("/dev/fuse"):
        skip("no /dev/fuse")

    uring = None
    if MODE == "fuse-uring":
        uring = take_enable_uring("Y")
    elif MODE == "fuse-auto-off":
        uring = take_enable_uring("N")

    work = tempfile.mkdtemp()
    mnt, sock = f"{work}/mnt", f"{work}/ctl.sock"
    read_fd, write_fd = os.pipe()
    if MODE == "nbd":
        target = f"{work}/nbd.sock"
        argv = ["nbdkit", "-f", "-U", target,
                f"{BUILD}/daemon/nbdkit-cswap-plugin.so", f"size={SIZE}",
                f"pool-limit={POOL_LIMIT}", "codec=lz4", f"ctl={sock}"]
    elif MODE == "ublk":
        target = f"{work}/device"      # the device's path, once it serves
        argv = [f"{BUILD}/daemon/ublk/cswap-ublk", "--no-standby",
                "--size", str(SIZE), "--pool-limit", POOL_LIMIT,
                "--codec", "lz4", "--ctl", sock]
    else:
        os.mkdir(mnt)
        target = f"{mnt}/swap"
        transport = {"fuse-classic": ["--transport", "classic"],
                     "fuse-uring": ["--transport", "uring"],
                     "fuse-auto-off": []}[MODE]
        argv = [f"{BUILD}/daemon/cswap-fuse", "-f", "--size", str(SIZE),
                "--pool-limit", POOL_LIMIT, "--codec", "lz4", *transport,
                "-o", f"ctl={sock}", mnt]
    print("1..6", flush=True)
    daemon = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                              stdout=open(target, "w") if MODE == "ublk"
                              else subprocess.DEVNULL, stderr=write_fd,
                              env=plugin_env() if MODE == "nbd" else None)
    reader = Reader(read_fd)
    try:
        # Started: the control socket answers, and a first write and
        # read went through (every serving thread has said what it says
        # on its first request), with stderr still read.
        started = False
        start_log = b""
        os.set_blocking(read_fd, False)
        for _ in range(200):
            try:
                start_log += os.read(read_fd, 65536)
            except BlockingIOError:
                pass
            if daemon.poll() is not None:
                break
            if os.path.exists(sock) and os.path.exists(target) and \
               (MODE != "ublk" or os.path.getsize(target) > 0) and \
               subprocess.run([f"{BUILD}/control/cswapctl", "--socket", sock,
                               "stats"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                started = True
                break
            time.sleep(0.1)
        if not started:
            diag(start_log.decode(errors="replace"))
            print(f"Bail out! the daemon did not start ({argv[0]})")
            return 1
        diag(start_log.decode(errors="replace"))

        if MODE == "ublk":
            target = open(target).readline().strip()
        filled = fill_pipe(write_fd)
        os.close(write_fd)
        write_fd = -1
        ok(filled > 0, f"the daemon's stderr is a pipe, full ({filled} bytes "
           "put in it) and not read: a write(2) to it blocks")
        def unblock():
            show_blocked_writers(daemon.pid)
            os.close(read_fd)   # the stuck write ends with EPIPE

        result = client(target, BOUND_S, unblock)
        ok(result is not None,
           f"writes until the pool ({POOL_LIMIT}) is full all end within "
           f"{BOUND_S} s, with stderr blocked")
        if result is None:
            print("Bail out! a thread serving I/O blocked on stderr")
            return 1
        ok(result is not None and result["refused"] > 0 and not result["other"],
           f"the full device refuses with ENOSPC, nothing else ({result})")
        ok(result is not None and result["stored"] > 0 and not result["bad"],
           "every chunk stored reads back equal while stderr is blocked")

        os.set_blocking(read_fd, True)
        reader.start()
        ok(reader.wait_for(b"cswap: warning: device full", BOUND_S),
           "once stderr is read again, the device full warning arrives")
        daemon.send_signal(signal.SIGTERM)
        try:
            status = daemon.wait(timeout=BOUND_S)
        except subprocess.TimeoutExpired:
            status = None
        reader.join(timeout=BOUND_S)
        with reader.lock:
            text = reader.text.decode(errors="replace")
        for line in text.splitlines():
            if line.lstrip("#"):
                diag(line.lstrip("#"))
        ok(status == 0 and "Sanitizer" not in text
           and text.rfind("cswap: stats ") > text.find("device full") >= 0,
           f"SIGTERM stops it cleanly (exit {status}), its stats line "
           "written after the drain's lines, no sanitizer report")
    finally:
        if write_fd != -1:
            os.close(write_fd)
        if not reader.is_alive():
            try:
                os.close(read_fd)   # a write stuck on it ends with EPIPE
            except OSError:
                pass
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        if MODE.startswith("fuse"):
            if f" {mnt} fuse" in open("/proc/mounts").read():
                subprocess.run(["fusermount3", "-u", "-z", mnt])
            os.rmdir(mnt)
        for name in os.listdir(work):
            os.unlink(f"{work}/{name}")
        os.rmdir(work)
        if uring:
            with open(ENABLE_URING, "w") as f:
                f.write(uring[1])
    return 1 if failed else 0


sys.exit(main())
