#!/bin/bash
# cswap: a remote swap device heals under whole-machine memory pressure.
# A 256 MiB VM (tests/vm/cswap-vm --net) with no cgroup swaps as `cswap
# up` sets up a local cswap-fuse device with a remote one below it
# (guest-swap up-both), the remote a cswap server on the host, over
# qemu's user network: another machine, out of the guest's memory
# pressure, as a real server is.  The remote is connected with
# remote-persist = 60 (cswap-connect --persist), and
# fill-check fills 1.5 times the guest's RAM and reads every block back,
# while the guest aborts its connection to the server twice (ss -K), 15 s
# apart, from 15 s after the remote device became swap.  Checks: the
# workload completed with every byte as written, a drop came while the
# remote device was swap, the watcher connected the device again after
# it, no reconnection failed, the guest's kernel reported no hung task,
# the local daemon and the server lived on, and `cswap down` took it all
# down.  (With the server inside the guest, under the same pressure, it
# cannot answer a new connection until the swap-outs it waits on go
# through, which they cannot: doc/design.md.)  Skips where cswap-vm skips.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
source "$here/../lib/tap.sh"

build=${CSWAP_BUILD_ROOT:-$here/../../build}
out=$(mktemp -d /var/tmp/cswap-vm-heal.XXXXXX) || skip "mktemp failed"
server_pid=
trap '[ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null; rm -rf "$out"' EXIT

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nbdkit --foreground --tls=off -i 127.0.0.1 -p "$port" --pidfile "$out/server.pid" \
  "$build/daemon/nbdkit-cswap-plugin.so" size=1G ctl=none 2>"$out/server.log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$out/server.pid" ] && break; sleep 0.1; done
[ -s "$out/server.pid" ] || skip "nbdkit did not start: $(head -3 "$out/server.log")"

# In the guest, beside the workload: two drops, 15 s apart, the first 15 s
# after the remote device became swap (counted from then, not from boot:
# a loaded host, CI's, once had `cswap up` finish after both drops, and
# nothing was dropped).  A drop is logged only if the device was swap then.
guest_script='(for _ in $(seq 600); do grep -q "^/dev/nbd" /proc/swaps && break; sleep 0.5; done
for i in 1 2; do sleep 15; grep -q "^/dev/nbd" /proc/swaps || break
ss -K dst 10.0.2.2 >/dev/null; echo "dropped at ${SECONDS}s, with the remote device swap" >>/tmp/vm-out/drops.log; done) &
exec env BUILD="$1" FILL_CHECK_PASSES=1 REMOTE_SERVER="10.0.2.2:$2" "CSWAP_CONF=remote-persist = 60" "$3/guest-swap" up-both fill-check'
"$here/cswap-vm" --build "$build" --mem 256 --net --timeout 800 --out "$out/vm" \
  -- bash -c "$guest_script" guest "$build" "$port" "$here" >"$out/vm.log" 2>&1
vm_rc=$?
[ "$vm_rc" != 77 ] || skip "$(grep 'skipped:' "$out/vm.log" | head -1)"
line=$out/vm/output.log
sed 's/^/# /' "$out/vm.log" | tail -2
grep '^{"bench"' "$line" 2>/dev/null | cut -c1-300 | sed 's/^/# /'
sed 's/^/# /' "$out/vm/drops.log" 2>/dev/null
grep 'cswap-connect' "$line" 2>/dev/null | sed 's/^/# /'

field () {                      # field NAME: a field of the JSON line
  /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[2]):
    if line.startswith("{\"bench\""):
        print(json.loads(line).get(sys.argv[1]))' "$1" "$line" 2>/dev/null
}
outcome=$(field outcome)
check "the VM finished within 800 s" test "$vm_rc" != 124
check "fill-check read every block back as written, through both drops" test "$outcome" = completed
check "the guest dropped the connection while the remote device was swap" \
  test "$(grep -c 'with the remote device swap' "$out/vm/drops.log" 2>/dev/null)" -ge 1
check "the watcher connected the device again after the first drop" \
  test "$(grep -c 'connected again' "$line" 2>/dev/null)" -ge 1
# The watcher's errors name the server (cswap-connect: HOST:PORT: …), its
# news the device (cswap-connect: /dev/nbd0: …).
check "no reconnection failed (no handshake error, no other contents)" \
  eval '! grep "^cswap-connect: [^/]" "$line" | grep -vq "^cswap-connect: warning:"'
check "no hung task in the guest's kernel log" \
  eval '! grep -q "blocked for more than" "$out/vm/console.log"'
check "the local daemon is still serving at the end" test "$(field daemon_alive)" = True
check "cswap down took it all down" grep -q '^cswap: down$' "$line"
check "the server is still serving" kill -0 "$server_pid"
done_testing
