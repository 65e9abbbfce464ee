#!/bin/bash
# shellcheck disable=SC2016  # eval and --run strings expand later, on purpose
# cswap: cswap-fuse under a (fake) systemd: READY=1 once the file is
# mounted, STATUS= with the ratio, WATCHDOG=1 at half WATCHDOG_USEC while
# store reads succeed, STOPPING=1 on SIGTERM.  A Python listener plays
# systemd's notify socket.
set -uo pipefail
[[ $(id -u) -eq 0 ]] || { echo "1..0 # SKIP mounting needs root"; exit 0; }
[[ -c /dev/fuse ]] || { echo "1..0 # SKIP no /dev/fuse"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
: "${CSWAP_BUILD_ROOT:?run through meson test}"

n=0 failed=0
check () {
  local name=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $name"
  else failed=$((failed + 1)); echo "not ok $n - $name"; fi
}
dir=$(mktemp -d /tmp/cswap-notify.XXXXXX)
mkdir "$dir/mnt"
daemon='' listener=''
cleanup () {
  [[ -n $daemon ]] && kill "$daemon" 2>/dev/null && wait "$daemon"
  mountpoint -q "$dir/mnt" && fusermount3 -uz "$dir/mnt"
  [[ -n $listener ]] && kill "$listener" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

# Prints each message; on READY=1, whether the file was mounted by then.
python3 - "$dir/notify.sock" "$dir/mnt" >"$dir/messages" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    msg = s.recv(4096).decode()
    for line in msg.split("\n"):
        if line == "READY=1":
            line += " mounted=%s" % os.path.ismount(sys.argv[2])
        print(line, flush=True)
PY
listener=$!
for _ in $(seq 50); do [[ -S $dir/notify.sock ]] && break; sleep 0.1; done

NOTIFY_SOCKET=$dir/notify.sock WATCHDOG_USEC=400000 \
  "$CSWAP_BUILD_ROOT/daemon/cswap-fuse" -f --size=64M --ctl=none "$dir/mnt" \
  2>"$dir/log" &
daemon=$!
sleep 3
# A write, so that the status has a page to show.
dd if=/dev/urandom of="$dir/mnt/swap" bs=4096 count=1 conv=notrunc oflag=direct 2>/dev/null
sleep 1
kill -TERM "$daemon"
wait "$daemon"
status=$?
daemon=
sleep 0.5
sed 's/^/# /' "$dir/messages"

check "cswap-fuse exits 0 on SIGTERM" test "$status" -eq 0
check "READY=1 is sent once, after the mount" \
  test "$(grep -c '^READY=1 mounted=True$' "$dir/messages")" -eq 1
check "no READY=1 before the mount" eval '! grep -q "mounted=False" "$dir/messages"'
check "STATUS= shows pages, memory and the ratio" \
  grep -q '^STATUS=.* pages (.* MiB) in .* MiB of memory, ratio [0-9.]*' "$dir/messages"
watchdogs=$(grep -c '^WATCHDOG=1$' "$dir/messages")
check "WATCHDOG=1 about every 0.2 s ($watchdogs in 4 s)" test "$watchdogs" -ge 10
check "STOPPING=1 on SIGTERM" grep -q '^STOPPING=1$' "$dir/messages"

# Outside systemd, nothing is sent and nothing breaks.
"$CSWAP_BUILD_ROOT/daemon/cswap-fuse" -f --size=64M --ctl=none "$dir/mnt" 2>"$dir/log" &
daemon=$!
for _ in $(seq 50); do [[ -e $dir/mnt/swap ]] && break; sleep 0.1; done
check "without NOTIFY_SOCKET the daemon serves as before" test -e "$dir/mnt/swap"
kill -TERM "$daemon"; wait "$daemon"; status=$?; daemon=
check "and stops cleanly" test "$status" -eq 0

echo "1..$n"
[[ $failed -eq 0 ]]
