#!/bin/bash
# shellcheck disable=SC2016  # eval strings expand later
# cswap on a Debian 13 machine, as a user runs it: the root of
# tests/trixie/make-root with Debian 13's kernel (6.12), systemd as its
# init and udev, and the Debian packages the trixie test built from this
# tree installed by dpkg -i (tests/trixie/make-vm-image, cached; the
# machine itself has no network), booted twice under qemu
# (tests/vm/cswap-vm --system, 256 MiB) from one disk:
#  - first boot, with the configuration's front end left to auto, as a
#    user leaves it (ublk on this kernel): cswap.service, enabled as a
#    user enables it, has swap on ublk devices once the machine is up;
#    `cswapctl` and `cswap status` show them; fill-check at 1.5 times
#    MemTotal (the whole machine swaps, no cgroup) reads every block back
#    as written although cswap-ublk's server is killed (SIGKILL) 15 s into
#    it: its standby, the unit's main process, takes the devices and the
#    store over (with the default backing file, whose pages it adopts
#    too; every step of the ladder online, as with a backing file; else
#    the ladder followed again), and the unit stays active
#    with the same main PID; then systemd powers the machine off;
#  - second boot, with a drop-in the first left for the FUSE front end:
#    the first one's journal says cswap.service stopped by its own
#    ExecStop= (swapoff of every page, then the daemon: its standby, which
#    passes the signal on), with no time-out and no kill; swap is on again
#    from the unit, on loop devices; the machine powers off again.
# Each boot ends within its time, without a hung task, a job timing out,
# a unit failing to start or an ordering cycle on the console
# (tests/trixie/guest-run is what the machine runs and writes to the
# results share).  /proc/swaps names every step by its
# /dev path, and the daemon's ladder follower never fails a swapon or a
# swapoff: a step swapped on in a mount namespace that then went was
# "/loop0" for every reader, systemd's loop0.swap for it failed to stop
# at shutdown, and the follower, not finding the step by that name,
# tried to swap it on again every 10 s (machine_swapon in
# scripts/cswap/device.sh).  No swap unit fails to stop at shutdown
# (swaps_clean).
#
# The packages: tests/trixie/test-trixie.sh keeps those its package test
# built in the build tree (trixie-debs/), marked with the tree's key
# (tests/trixie/source-key); CI runs that test first (scripts/test).
# When they are not of this tree, this test builds them by running that
# test's package suite (minutes).
#
# Bounded by $VM_TEST_TIMEOUT_S per boot (default 600 s: with the default
# backing file the first boot's fill-check writes to the disk too).  Skips, with the
# reason, without root, qemu or busybox, or where the root or the
# machine's kernel cannot be made (no debootstrap, Debian's archive
# unreachable).
set -uo pipefail
: "${CSWAP_SOURCE_ROOT:?run through meson test}" "${CSWAP_BUILD_ROOT:?}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
source "$here/../lib/tap.sh"
timeout_s=${VM_TEST_TIMEOUT_S:-600}
mem_mib=256

[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, chroot, mounts, qemu's 9p share)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
command -v busybox >/dev/null || skip "no busybox (apt-get install busybox-static)"

scratch=$(mktemp -d /var/tmp/cswap-trixie-vm.XXXXXX) || skip "mktemp failed"
# VM_TEST_KEEP=1 keeps the disk, the consoles and the results there.
# A failed run keeps its boots' consoles, logs and results (not the
# disk) in the build tree's meson-logs, and shows the blocked tasks the
# consoles hold: the one hang this test met (a take-over, issue 63) left
# nothing to read once its directory was gone.
keep_failed () {
  local kept
  [[ $status -ne 0 ]] || return 0
  kept=$CSWAP_BUILD_ROOT/meson-logs/trixie-vm-failed.$(date +%Y%m%d-%H%M%S)
  mkdir -p "$kept" && cp -r "$scratch"/boot* "$kept"/ 2>/dev/null
  echo "# failed: the boots' consoles, logs and results are kept in $kept"
  for console in "$scratch"/boot*/console.log; do
    [[ -s $console ]] || continue
    # cswap's own blocked threads first, then the rest.
    { grep -aA24 'task:cswap.*state:D' "$console" | grep -av ' ? ' | head -60
      grep -aA24 'task:.*state:D' "$console" | grep -av ' ? ' | head -60
    } | sed "s|^|# ${console#"$scratch"/}: |"
  done
}
if [[ ${VM_TEST_KEEP:-0} = 1 ]]; then
  echo "# kept: $scratch"
  trap 'keep_failed' EXIT
else
  trap 'keep_failed; rm -rf --one-file-system "$scratch"' EXIT
fi
comment () { sed 's/^/# /' "$@"; }
not () { ! "$@"; }

# cached MAKER ARGS…: a maker's output; skips with its message on 77,
# fails the check on any other error.
made='' made_rc=''
cached () {
  local name=$1
  made=$("$here/$name" "${@:2}" 2>"$scratch/$name.err")
  made_rc=$?
  [[ $made_rc -ne 77 ]] || skip "$(sed "s/^$name: //" "$scratch/$name.err" | tail -1)"
  comment "$scratch/$name.err"
}

step_s=$SECONDS
cached make-root
check "tests/trixie/make-root makes the Debian 13 root" test "$made_rc" -eq 0
[[ $made_rc -eq 0 ]] || done_testing
root=$made

# The packages of this tree.
key=$("$here/source-key" "$CSWAP_SOURCE_ROOT")
debs=$CSWAP_BUILD_ROOT/trixie-debs
if [[ $(cat "$debs/source-key" 2>/dev/null) != "$key" ]]; then
  echo "# no packages of this tree ($key) in $debs: the trixie test's package suite builds them"
  CSWAP_TRIXIE_SUITES=package "$here/test-trixie.sh" >"$scratch/trixie.tap" 2>&1
  grep '^not ok' "$scratch/trixie.tap" | comment
fi
check "the Debian 13 packages of this tree ($key) are there" \
  test "$(cat "$debs/source-key" 2>/dev/null)" = "$key"
[[ $status -eq 0 ]] || done_testing

cached make-vm-image "$root" "$debs"/*.deb
check "tests/trixie/make-vm-image makes the machine's disk" test "$made_rc" -eq 0
[[ $made_rc -eq 0 ]] || done_testing
read -r kernel_root image <<<"$made"
kernel=$(ls "$kernel_root"/boot/vmlinuz-* | head -1)
kver=${kernel#"$kernel_root"/boot/vmlinuz-}
echo "# the root, the kernel and the disk: $((SECONDS - step_s)) s ($kver, $image)"

# The machine's disk: a copy of the image, which both boots write to.
disk=$scratch/disk.img
cp --sparse=always "$image" "$disk"

# boot N: boots the machine once, its results in $scratch/bootN.
boot () {
  local dir=$scratch/boot$1 start_s=$SECONDS
  mkdir -p "$dir"
  cp "$here/guest-run" "$CSWAP_SOURCE_ROOT/bench/programs/fill-check.py" "$dir/"
  "$here/../vm/cswap-vm" --system "$disk" --kernel-root "$kernel_root" --kernel "$kver" \
    --build "$CSWAP_BUILD_ROOT" \
    --mem "$mem_mib" --timeout "$timeout_s" --out "$dir" \
    --kernel-args "cswapvm.boot=$1" >"$dir/vm.log" 2>&1
  vm_rc=$?
  [[ $vm_rc -ne 77 ]] || skip "$(grep 'skipped:' "$dir/vm.log" | head -1)"
  comment "$dir/vm.log"
  echo "# boot $1: $((SECONDS - start_s)) s, from qemu's start to its exit"
}

# console_has N PATTERN: boot N's console has a line matching PATTERN
# (an extended regular expression), shown as a comment.
console_has () {
  local console=$scratch/boot$1/console.log lines
  [[ -s $console ]] || return 0
  lines=$(grep -aE "$2" "$console") || return 1
  comment <<<"$lines"
}
# console_clean N: boot N's console has no hung task, no job that timed
# out, no unit that failed to start, no ordering cycle systemd broke.
console_clean () {
  not console_has "$1" 'blocked for more than|timed out|Timed out|Failed to (start|mount)|Failed unmounting|ordering cycle'
}
# swaps_clean N: no swap unit failed to stop at boot N's shutdown.  At
# shutdown systemd stops its own swap units (dev-loop0.swap…) and
# cswap.service at once, in no order.  Measured after fill-check: systemd
# swapped loop2 off under the daemon's ladder follower, which swapped
# loop0 and loop1 on again to keep its headroom before ExecStop's detach
# stopped it, and systemd said "Failed deactivating swap" for both.  The
# follower now stands aside once another process swaps a step off
# (daemon/ladder/ladder-follow.h).
swaps_clean () {
  not console_has "$1" 'Failed deactivating swap'
}
# swaps_named N: boot N's /proc/swaps names every area by its /dev path.
swaps_named () {
  not grep -v -e '^Filename' -e '^/dev/' "$scratch/boot$1/swaps"
}
# follower_clean N: the daemon's ladder follower logged no failed swapon
# or swapoff at boot N (shown as comments if it did).
follower_clean () {
  local lines
  lines=$(grep 'ladder: swap' "$scratch/boot$1/cswap-journal" 2>/dev/null) || return 0
  comment <<<"$lines"
  return 1
}
# result N NAME: a result boot N wrote.
result () { cat "$scratch/boot$1/$2" 2>/dev/null; }
# devices N: what boot N swaps to (ublk, then loop devices).
devices () { if [[ $1 = 1 ]]; then echo /dev/ublkb; else echo /dev/loop; fi; }
swap_on () { grep -q "^$(devices "$1")" "$scratch/boot$1/swaps"; }
# journal_has N PATTERN: cswap.service's journal of boot N has a line
# matching PATTERN (basic regular expression), shown as a comment.
journal_has () {
  local lines
  lines=$(grep -a "$2" "$scratch/boot$1/cswap-journal" 2>/dev/null) || return 1
  comment <<<"$lines"
}

# ------------------------------------------------------- first boot ----
boot 1
check "boot 1: the machine powered off within ${timeout_s}s" test "$vm_rc" -eq 0
check "boot 1: the test ran to its end" test "$(result 1 finished)" = yes
comment "$scratch/boot1/guest-run.log" 2>/dev/null
check "boot 1: the system is up, no unit failed ($(result 1 system-state))" \
  eval 'test "$(result 1 system-state)" = running && test -z "$(result 1 failed-units)"'
check "boot 1: cswap.service is active" test "$(result 1 cswap-active)" = active
comment "$scratch/boot1/swaps" 2>/dev/null
check "boot 1: swap is on from the unit (a ublk device in /proc/swaps: auto chose ublk)" swap_on 1
check "boot 1: /proc/swaps names every area by its /dev path" swaps_named 1
# The sandbox (issue 62, item 12): no block-blkext, the ublk disks
# allowed one by one by `cswap attach`.
grep -E 'ublk|blkext|loop|nbd|fuse' "$scratch/boot1/devices" 2>/dev/null | comment
comment "$scratch/boot1/device-allow" 2>/dev/null
check "boot 1: under the unit's device policy, its ublk disks are allowed by name" \
  grep -q '/dev/ublkb[0-9]* rw' "$scratch/boot1/device-allow"
check "boot 1: a process in cswap.service's cgroup opens /dev/ublkb0" \
  test "$(result 1 ublk-open.rc)" = 0
comment "$scratch/boot1/blkext-open.err" 2>/dev/null
check "boot 1: but not a partition of a loop device, in blkext as NVMe's ($(result 1 blkext-open.rc))" \
  eval '[[ $(result 1 blkext-open.rc) =~ ^[1-9] ]] && grep -q "Operation not permitted" "$scratch/boot1/blkext-open.err"'
check "boot 1: which opens outside the unit (a control)" \
  test "$(result 1 blkext-outside.rc)" = 0
comment "$scratch/boot1/cswapctl.out" 2>/dev/null
check "boot 1: cswapctl shows the device" \
  eval 'test "$(result 1 cswapctl.rc)" = 0 && grep -q "^/dev/ublkb" "$scratch/boot1/cswapctl.out"'
comment "$scratch/boot1/cswap-status.out" 2>/dev/null
check "boot 1: cswap status says the device is active" \
  eval 'test "$(result 1 cswap-status.rc)" = 0 && grep -q "^cswap: active: /dev/ublkb" "$scratch/boot1/cswap-status.out"'
comment "$scratch/boot1/fill-check.out" "$scratch/boot1/swaps-peak" 2>/dev/null
echo "# pages swapped out during fill-check: $(result 1 pswpout)"
check "boot 1: fill-check at 1.5x MemTotal read every block back as written" \
  eval 'test "$(result 1 fill-check.rc)" = 0 && grep -q "^fill-check: ok" "$scratch/boot1/fill-check.out"'
check "boot 1: the workload swapped" test "$(result 1 pswpout || echo 0)" -gt 0
check "boot 1: cswap-ublk's server was killed 15 s into it ($(result 1 server-killed))" \
  eval '[[ $(result 1 server-killed) =~ ^[0-9]+$ ]]'
check "boot 1: its standby took the devices and the store over" \
  journal_has 1 "^.*cswap-ublk: took over"
# The package's defaults: a backing file where /var/lib/cswap can hold
# one, and then the whole ladder online (scripts/cswap/backing.sh);
# without one, a ladder the daemon follows.
backing_line=$(grep -m1 "^backing:" "$scratch/boot1/cswap-status.out" 2>/dev/null)
echo "# ${backing_line:-no backing line in cswap status}"
if grep -q "^backing: *default, /var/lib/cswap/backing" "$scratch/boot1/cswap-status.out" 2>/dev/null; then
  check "boot 1: with the default backing file, every step of the ladder is swap" \
    grep -q "^ladder: *all" "$scratch/boot1/cswap-status.out"
  check "boot 1: and still after the take-over" \
    grep -q "^ladder: *all" "$scratch/boot1/cswap-status-after.out"
else
  check "boot 1: and follows the swap in use again" \
    journal_has 1 "cswap-ublk: following the swap in use again"
fi
check "boot 1: the unit stayed active, its main PID the same ($(result 1 main-pid-after))" \
  eval 'test "$(result 1 cswap-active-after)" = active && test "$(result 1 main-pid-after)" = "$(result 1 main-pid-before)"'
comment "$scratch/boot1/cswap-status-after.out" 2>/dev/null
check "boot 1: cswap status says the device is active after the take-over" \
  eval 'test "$(result 1 cswap-status-after.rc)" = 0 && grep -q "^cswap: active: /dev/ublkb" "$scratch/boot1/cswap-status-after.out"'
check "boot 1: no hung task, time-out, failed start or ordering cycle on the console" console_clean 1
check "boot 1: the daemon's ladder follower failed no swapon or swapoff" follower_clean 1
check "boot 1: no swap unit failed to stop at the shutdown" swaps_clean 1
# A first boot that did not end is not booted again.
[[ $vm_rc -eq 0 ]] || done_testing

# ------------------------------------------------------ second boot ----
boot 2
check "boot 2: the machine powered off within ${timeout_s}s" test "$vm_rc" -eq 0
check "boot 2: the test ran to its end" test "$(result 2 finished)" = yes
comment "$scratch/boot2/guest-run.log" 2>/dev/null

# Boot 1's shutdown, from its journal: cswap.service's stop.
journal=$scratch/boot2/journal-previous
grep -E 'cswap' "$journal" 2>/dev/null | sed -n '/Stopping cswap/,$p' | comment
stopped_by_exec_stop () {
  grep -q 'Stopping cswap.service\|Stopping cswap compressed' "$journal" &&
    grep -q 'cswap.service: Deactivated successfully' "$journal" &&
    not grep -E 'cswap.service: (State .* timed out|Killing|Main process exited, code=killed|Failed)' "$journal"
}
check "boot 1's shutdown: cswap.service stopped by its ExecStop=, no time-out, no kill" \
  stopped_by_exec_stop
# How long the unit's start took at boot 1 (its TimeoutStartSec= is 2
# min; TCG makes every process it starts slow).
awk '/systemd\[1\]: Starting cswap.service/ { start = substr($1 $2, 2) + 0 }
     /systemd\[1\]: Started cswap.service/ && start { printf "# boot 1: cswap.service started in %.1f s\n", substr($1 $2, 2) - start }' \
  "$journal" 2>/dev/null
check "boot 2: the system is up, no unit failed ($(result 2 system-state))" \
  eval 'test "$(result 2 system-state)" = running && test -z "$(result 2 failed-units)"'
check "boot 2: cswap.service is active again" test "$(result 2 cswap-active)" = active
check "boot 2: swap is on again from the unit, through the FUSE front end now" swap_on 2
check "boot 2: /proc/swaps names every area by its /dev path" swaps_named 2
comment "$scratch/boot2/cswap-status.out" 2>/dev/null
check "boot 2: cswap status says the device is active" \
  eval 'test "$(result 2 cswap-status.rc)" = 0 && grep -q "^cswap: active: /dev/loop" "$scratch/boot2/cswap-status.out"'
check "boot 2: no hung task, time-out, failed start or ordering cycle on the console" console_clean 2
check "boot 2: the daemon's ladder follower failed no swapon or swapoff" follower_clean 2
check "boot 2: no swap unit failed to stop at the shutdown" swaps_clean 2
done_testing
