#!/bin/bash
# cswap: cswap-ublk in a small VM whose kernel has ublk (bookworm-backports'
# 6.12, which scripts/deps installs; tests/vm/cswap-vm --kernel ublk).
#
# One VM, one check after another:
#  - the model test (guest-ublk-model.py): random direct-I/O reads and
#    writes, discards and write-zeroes through /dev/ublkbN against a
#    reference, every read equal; unaligned and past-the-end requests
#    refused while the device serves on; SIGTERM stops the daemon, which
#    deletes its device;
#  - then swap as a user sets it up on a machine with a disk: `cswap up`
#    with frontend = ublk and the default backing file (on ext4 on a
#    scratch disk), fill-check under whole-machine pressure in 256 MiB
#    (guest-swap up-ublk fill-check, one pass), its server killed
#    (SIGKILL) 15 s in, `cswap down`: completed, every block read back as
#    written, the standby, with the libraries of its server's I/O path
#    locked before the kill (so a take-over reads none from disk), took
#    the devices, the store and the file over,
#    pages went to the file, no hung task, the daemon alive at the end
#    with none of its pages in swap and every anonymous mapping of it
#    locked (an unlocked one stalled this run: doc/design.md, "ublk"),
#    and after `cswap down` no swap, no ublk device and no daemon left.
#    The kill: a take-over whose adopter opened its PSI trigger before
#    its queues served hung the machine here (kthreadd, starting the
#    kernel's PSI poller for it, in swap writes to the devices being
#    taken over; doc/design.md, "Nothing on the way to serving waits for
#    a new kernel thread");
#  - last, since it kills daemons under swap: what a killed cswap-ublk
#    leaves (guest-ublk-leftovers): with user recovery its devices taken
#    over (`cswap-ublk --recover`, `cswap up`), the pages it held failing
#    with EIO and SIGBUS, never other bytes, swap going on, and `cswap
#    down` leaving nothing; its devices deleted by --delete-dead, never a
#    live one;
#  - and a disk that is swap never stopped nor deleted, whoever stops
#    (guest-ublk-swap-kept): SIGTERM refused through another node of it,
#    the standby not killed by stop signals mid-take-over, a take-over
#    that fails leaving the disk for --recover, which serves every page,
#    and `cswap down` with the standby alone killed stopping its server;
#  - and with its stderr a full pipe no one reads (as a log on a tmpfs
#    whose page is in swap on the device itself), writes until its pool
#    is full end, stored or refused, and the warning arrives once stderr
#    is read (tests/daemon/stderr-blocked.py ublk; issue 62, item 1).
# VM_UBLK_PARTS says which parts run: all (the default), swap (the swap
# part alone) or others (all but it).  The suite runs the two halves as
# two tests in the two lanes of scripts/test (vm-ublk-swap and vm-ublk),
# so that neither lane waits for the whole of it (CI: 851 s in one).
# Bounded by $VM_TEST_TIMEOUT_S (default 1000 s: about 4 minutes alone
# under TCG before the take-overs in a row and guest-ublk-swap-kept were
# added, which cost about 95 s each on a quiet host; 411 s then in the
# whole suite beside the other lane).  Skips with the test bed's
# reason where it cannot boot a kernel with ublk (bookworm-backports'
# 6.12 not installed: scripts/deps).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
source "$here/../lib/tap.sh"

build=${CSWAP_BUILD_ROOT:-$here/../../build}
timeout_s=${VM_TEST_TIMEOUT_S:-1000}
parts=${VM_UBLK_PARTS:-all}
case $parts in
  all|swap|others) ;;
  *) echo "VM_UBLK_PARTS: all, swap or others, not $parts" >&2; exit 2 ;;
esac
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

# The guest: the model test, then guest-swap, whose exit runs `cswap
# down`, then what is left of it, one line; then the leftovers of a killed
# daemon and the rest (each part as VM_UBLK_PARTS says).  fill-check
# is bounded well inside the VM's time so that a slow run still reports.
scratch_args=()
[ "$parts" = others ] || scratch_args=(--scratch 1024)
"$here/cswap-vm" --kernel ublk --build "$build" --mem 256 --timeout "$timeout_s" \
  "${scratch_args[@]}" --out "$out" -- env BUILD="$build" FILL_CHECK_PASSES=1 \
  WORKLOAD_TIMEOUT_S=$((timeout_s * 2 / 5)) bash -c \
  'if [ "$2" != swap ]; then
     /usr/bin/python3 "$0"/guest-ublk-model.py "$1"/daemon/ublk/cswap-ublk 2000 > model.tap; echo "model exit $?"
   fi
   if [ "$2" != others ]; then
     KILL_DAEMON_AFTER_S=15 "$0"/guest-swap up-ublk fill-check
     echo "after down: swaps=$(($(wc -l < /proc/swaps) - 1)) ublk_devices=$(ls /dev/ublkb* 2>/dev/null | wc -l) daemons=$(pgrep -cx cswap-ublk)"
   fi
   if [ "$2" != swap ]; then
     "$0"/guest-ublk-leftovers "$1" > leftovers.tap
     "$0"/guest-ublk-swap-kept "$1" > swap-kept.tap
     CSWAP_BUILD_ROOT="$1" /usr/bin/python3 "$0"/../daemon/stderr-blocked.py ublk > stderr-blocked.tap
   fi' \
  "$here" "$build" "$parts" >"$out_root/vm.log" 2>&1
vm_rc=$?
[ "$vm_rc" = 77 ] && skip "$(grep 'skipped:' "$out_root/vm.log" | head -1)"
sed 's/^/# /' "$out_root/vm.log" | head -3
check "the VM finished within ${timeout_s}s" test "$vm_rc" != 124
# guest_tap FILE LABEL WHAT: a guest check's TAP, shown; it passed when it
# got to its plan with no "not ok".
guest_tap ()
{
  sed "s/^/# $2: /" "$out/$1" 2>/dev/null
  check "$3: every check passed" \
    eval "grep -q '^1\.\.' '$out/$1' && ! grep -q '^not ok' '$out/$1'"
}
if [ "$parts" != swap ]; then
  guest_tap model.tap model "model test"
  guest_tap leftovers.tap leftovers "what a killed cswap-ublk leaves"
  guest_tap swap-kept.tap "swap kept" \
    "a cswap-ublk disk that is swap is never stopped nor deleted"
  guest_tap stderr-blocked.tap "stderr blocked" \
    "cswap-ublk serves on while its stderr blocks"
fi
line=$out/output.log
if [ "$parts" != others ]; then
  grep -E '^\{"bench"|^guest-swap: the daemon' "$line" 2>/dev/null | sed 's/^/# /'
  check "cswap up (frontend = ublk): fill-check read every block back as written" \
    test "$(field outcome "$line" 2>/dev/null)" = completed
  check "its server killed 15 s in, the standby took the devices over ($(field recovered_in_s "$line" 2>/dev/null) s after the kill)" \
    eval '[ "$(field daemon_killed "$line" 2>/dev/null)" = True ] && [[ $(field recovered_in_s "$line" 2>/dev/null) =~ ^[0-9.]+$ ]]'
  check "and adopted the store's pages ($(field pages_adopted "$line" 2>/dev/null))" \
    eval '[[ $(field pages_adopted "$line" 2>/dev/null) =~ ^[1-9][0-9]*$ ]]'
  grep -E '^backing:' "$line" 2>/dev/null | sed 's/^/# /'
  grep "the standby's libraries" "$line" 2>/dev/null | sed 's/^/# /'
  check "before the kill, the standby had libc, libzstd and libcrypto (the file is sealed) locked whole" \
    grep -q "the standby's libraries, text locked: libc.so whole, libzstd.so whole, libcrypto.so whole" "$line"
  check "pages went to the default backing file ($(field disk_written_bytes "$line" 2>/dev/null) bytes written to the scratch disk)" \
    eval 'grep -q "^backing: *default" "$line" && [[ $(field disk_written_bytes "$line" 2>/dev/null) =~ ^[1-9][0-9]*$ ]]'
  check "cswap up (frontend = ublk): the daemon is still serving at the end" \
    test "$(field daemon_alive "$line" 2>/dev/null)" = True
  check "the daemon has no page in swap at the end (VmSwap 0)" \
    test "$(field daemon_swap_kib "$line" 2>/dev/null)" = 0
  check "every mapping of the daemon that holds anonymous pages is locked" \
    test "$(field daemon_unlocked_mappings "$line" 2>/dev/null)" = 0
  # The store lives in the shared-memory segment (it outlives the
  # daemon), so the pool is shmem and the process's own pages are the rest.
  check "the daemon's resident set by kind: anonymous, library and the segment's pages" \
    eval '[ "$(field daemon_rss_kib "$line" 2>/dev/null | /usr/bin/python3 -c "import ast, sys; r = ast.literal_eval(sys.stdin.read()); print(all(r[k] > 0 for k in (\"anon\", \"file\", \"shmem\")))")" = True ]'
  grep '^after down:' "$line" 2>/dev/null | sed 's/^/# /'
  check "cswap down: no swap, no ublk device, no daemon left" \
    grep -qx 'after down: swaps=0 ublk_devices=0 daemons=0' "$line"
fi
check "no hung task in the guest's kernel log" \
  not grep -q 'blocked for more than' "$out/console.log"
# guest-ublk-leftovers reads pages a killed daemon lost, on purpose,
# once it says so in the kernel log: errors before that line are not.
check "no I/O error on a ublk device in the guest's kernel log (before the lost pages' reads)" \
  not eval "sed '/guest-ublk-leftovers: reads of lost pages/q' \"\$out/console.log\" | grep -Eq 'I/O error, dev ublkb|ublk.*(abort|error)'"
if [ "$vm_rc" = 124 ]; then
  # Slow or stuck: the guest's last memory sample and its blocked tasks.
  grep '^==' "$out/monitor.log" 2>/dev/null | tail -2 | sed 's/^/# monitor: /'
  grep -A12 'task:.*state:D' "$out/console.log" | head -60 | sed 's/^/# /'
fi
done_testing
