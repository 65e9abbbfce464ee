#!/bin/bash
# cswap: a small VM under whole-machine memory pressure swaps through each
# front end and finishes with every byte intact.
#
# usage: test-vm-swap.sh DEVICE…   (guest-swap's devices: cswap-fuse,
#                                   cswap-nbd, manual-nbd, zram-lz4, up-fuse,
#                                   up-nbd, up-remote, up-both)
#
# For each DEVICE: a 256 MiB VM ($VM_TEST_MEM_MIB; tests/vm/cswap-vm) with
# no cgroup runs fill-check, which fills 1.5 times the VM's RAM
# ($WORKLOAD_MIB MiB if set) and then reads every
# block back once, checking its SHA-256 (one pass, not bench's two: the
# test's minutes go to CI), on that device alone.  Checks: the workload completed
# (its own check passed), the guest kernel reported no hung task, the
# daemon was still alive, and for up-* that `cswap down` took it down
# (and for up-fuse and up-nbd that the daemon was handed the ladder).
# Each VM is bounded ($VM_TEST_TIMEOUT_S, 600 s by default); the VM is
# thrown away after, with everything in it, so the host's swap is never
# touched.  Skips where cswap-vm skips (no root, no qemu, no Debian
# kernel, no busybox).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
source "$here/../lib/tap.sh"

build=${CSWAP_BUILD_ROOT:-$here/../../build}
timeout_s=${VM_TEST_TIMEOUT_S:-600}
mem_mib=${VM_TEST_MEM_MIB:-256}
out_root=$(mktemp -d /var/tmp/cswap-vm-test.XXXXXX) || skip "mktemp failed"
trap 'rm -rf "$out_root"' EXIT

# A probe run first: the test bed itself, so that a host without it (or a
# tree the guest cannot see, under /tmp) skips the whole test at once.
# It also says whether --kernel-args reaches the guest kernel (exit 3 if not).
"$here/cswap-vm" --build "$build" --mem 128 --timeout 120 --out "$out_root/probe" \
  --kernel-args "cswapvm.probe_arg=1 init_on_alloc=0" -- \
  sh -c 'grep -qw cswapvm.probe_arg=1 /proc/cmdline && grep -qw init_on_alloc=0 /proc/cmdline || exit 3' \
  >"$out_root/probe.log" 2>&1
case $? in
  0|3) check "--kernel-args reach the guest's command line" \
         test "$(cat "$out_root/probe/rc" 2>/dev/null)" = 0 ;;
  77) skip "$(grep 'skipped:' "$out_root/probe.log" | head -1)" ;;
  *) echo "Bail out! the VM test bed does not boot: $(tail -3 "$out_root/probe.log" | tr '\n' ' ')"; exit 1 ;;
esac
sed -n 's/^vm: /# vm: /p' "$out_root/probe.log" | head -1

# An option given without its value is refused by name, before any VM.
for option in --mem --kernel-args; do
  check "cswap-vm $option with no value is refused, naming it" \
    eval '"$here/cswap-vm" "$option" 2>&1 | grep -q -- "$option needs a value"'
done

not () { ! "$@"; }

field () {                      # field NAME FILE: a field of the JSON line
  /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[2]):
    if line.startswith("{\"bench\""):
        print(json.loads(line).get(sys.argv[1]))' "$1" "$2"
}

for device in "$@"; do
  out=$out_root/$device
  "$here/cswap-vm" --build "$build" --mem "$mem_mib" --timeout "$timeout_s" --out "$out" \
    -- env BUILD="$build" FILL_CHECK_PASSES=1 ${WORKLOAD_MIB:+WORKLOAD_MIB=$WORKLOAD_MIB} "$here/guest-swap" "$device" fill-check >"$out_root/$device.log" 2>&1
  vm_rc=$?
  line=$out/output.log
  sed 's/^/# /' "$out_root/$device.log" | tail -2
  grep '^{"bench"' "$line" 2>/dev/null | sed 's/^/# /'
  check "$device: the VM finished within ${timeout_s}s" test "$vm_rc" != 124
  check "$device: fill-check read every block back as written" \
    test "$(field outcome "$line" 2>/dev/null)" = completed
  check "$device: no hung task in the guest's kernel log" \
    not grep -q 'blocked for more than' "$out/console.log"
  case $device in
    zram-*) ;;
    *) check "$device: the daemon is still serving at the end" \
         test "$(field daemon_alive "$line" 2>/dev/null)" = True ;;
  esac
  case $device in
    up-*) check "$device: cswap down took it all down" grep -q '^cswap: down$' "$line" ;;
  esac
  # The man page's commands set everything the plugin warns about
  # (daemon/nbdkit/nbdkit-settings.c); its log is the daemon's stderr.
  case $device in
    manual-nbd) check "$device: the plugin warned about no setting the man page's commands leave out" \
      not grep -q 'vm.min_free_kbytes is\|vm.page-cluster is\|nbdkit serves with\|nbdkit may speak TLS' "$out/daemon.log" ;;
  esac
  # The default, auto, hands the ladder to the daemon (a device larger
  # than the floor, half the RAM); the state says all if it could not.
  case $device in
    up-fuse|up-nbd) check "$device: the daemon followed the swap in use" \
      test "$(field ladder_online "$line" 2>/dev/null)" = follow ;;
  esac
  if [ "$vm_rc" = 124 ]; then
    # What the guest's kernel said of its blocked tasks, for the log.
    grep -A3 'task:.*state:D' "$out/console.log" | head -40 | sed 's/^/# /'
  fi
done
done_testing
