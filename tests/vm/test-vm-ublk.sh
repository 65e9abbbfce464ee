#!/bin/bash
# cswap: cswap-ublk in a small VM whose kernel has ublk (bookworm-backports'
# 6.12, which scripts/deps installs; tests/vm/cswap-vm --kernel ublk).
#
# One VM, three checks:
#  - the model test (guest-ublk-model.py): random direct-I/O reads and
#    writes, discards and write-zeroes through /dev/ublkbN against a
#    reference, every read equal; unaligned and past-the-end requests
#    refused while the device serves on; SIGTERM stops the daemon, which
#    deletes its device;
#  - with VM_UBLK_SWAP=1, then swap on cswap-ublk under whole-machine
#    pressure in 256 MiB (guest-swap cswap-ublk fill-check, one pass):
#    completed, every block read back as written, no hung task, the
#    daemon alive at the end.  Not by default: one run in four on a
#    single device stalled with a queue thread faulting on a page of the
#    daemon's that was in swap (doc/design.md, "ublk"), and CI must not
#    depend on a known hang;
#  - last, since it leaves a swap area no one can take off: what a killed
#    cswap-ublk leaves (guest-ublk-leftovers): its devices deleted by
#    --delete-dead and by `cswap down`, never a live one; a swap area
#    whose disk the driver removed reported, not waited on.
# Bounded by $VM_TEST_TIMEOUT_S (default 900 s: about 200 s alone, 450
# with the host at load 16-20 beside other VMs).  Skips with the test
# bed's reason where it cannot boot a kernel with ublk.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
source "$here/../lib/tap.sh"

build=${CSWAP_BUILD_ROOT:-$here/../../build}
timeout_s=${VM_TEST_TIMEOUT_S:-900}
out_root=$(mktemp -d /var/tmp/cswap-vm-ublk.XXXXXX) || skip "mktemp failed"
trap 'rm -rf "$out_root"' EXIT
out=$out_root/vm

field () {                      # field NAME FILE: a field of the JSON line
  /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[2]):
    if line.startswith("{\"bench\""):
        print(json.loads(line).get(sys.argv[1]))' "$1" "$2"
}
not () { ! "$@"; }

"$here/cswap-vm" --kernel ublk --build "$build" --mem 256 --timeout "$timeout_s" \
  --out "$out" -- env BUILD="$build" FILL_CHECK_PASSES=1 bash -c \
  '/usr/bin/python3 "$0"/guest-ublk-model.py "$1"/daemon/ublk/cswap-ublk 2000 > model.tap; echo "model exit $?"; [ "$2" != 1 ] || "$0"/guest-swap cswap-ublk fill-check; "$0"/guest-ublk-leftovers "$1" > leftovers.tap' \
  "$here" "$build" "${VM_UBLK_SWAP:-0}" >"$out_root/vm.log" 2>&1
vm_rc=$?
[ "$vm_rc" = 77 ] && skip "$(grep 'skipped:' "$out_root/vm.log" | head -1)"
sed 's/^/# /' "$out_root/vm.log" | head -3
check "the VM finished within ${timeout_s}s" test "$vm_rc" != 124
sed 's/^/# model: /' "$out/model.tap" 2>/dev/null
check "model test: every check passed" \
  eval 'grep -q "^1\.\." "$out/model.tap" && ! grep -q "^not ok" "$out/model.tap"'
sed 's/^/# leftovers: /' "$out/leftovers.tap" 2>/dev/null
check "what a killed cswap-ublk leaves: every check passed" \
  eval 'grep -q "^1\.\." "$out/leftovers.tap" && ! grep -q "^not ok" "$out/leftovers.tap"'
line=$out/output.log
if [ "${VM_UBLK_SWAP:-0}" = 1 ]; then
  grep '^{"bench"' "$line" 2>/dev/null | sed 's/^/# /'
  check "cswap-ublk: fill-check read every block back as written" \
    test "$(field outcome "$line" 2>/dev/null)" = completed
  check "cswap-ublk: the daemon is still serving at the end" \
    test "$(field daemon_alive "$line" 2>/dev/null)" = True
fi
check "no hung task in the guest's kernel log" \
  not grep -q 'blocked for more than' "$out/console.log"
check "no I/O error on a ublk device in the guest's kernel log" \
  not grep -Eq 'I/O error, dev ublkb|ublk.*(abort|error)' "$out/console.log"
if [ "$vm_rc" = 124 ]; then
  # Slow or stuck: the guest's last memory sample and its blocked tasks.
  grep '^==' "$out/monitor.log" 2>/dev/null | tail -2 | sed 's/^/# monitor: /'
  grep -A12 'task:.*state:D' "$out/console.log" | head -60 | sed 's/^/# /'
fi
done_testing
