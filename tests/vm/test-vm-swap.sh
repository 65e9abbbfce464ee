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
# touched.  The test bed's own checks ride along: each VM is booted with
# two dummy parameters in --kernel-args, which must reach its kernel's
# command line (a probe VM of their own cost CI half a minute a test).
# Skips where cswap-vm skips (no root, no qemu, no Debian kernel, no
# busybox).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
source "$here/../lib/tap.sh"

build=${CSWAP_BUILD_ROOT:-$here/../../build}
timeout_s=${VM_TEST_TIMEOUT_S:-600}
mem_mib=${VM_TEST_MEM_MIB:-256}
out_root=$(mktemp -d /var/tmp/cswap-vm-test.XXXXXX) || skip "mktemp failed"
trap 'rm -rf "$out_root"' EXIT

not () { ! "$@"; }

field () {                      # field NAME FILE: a field of the JSON line
  /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[2]):
    if line.startswith("{\"bench\""):
        print(json.loads(line).get(sys.argv[1]))' "$1" "$2"
}

for device in "$@"; do
  out=$out_root/$device
  # The guest keeps its command line (cmdline, on the results share)
  # before it runs the workload.
  "$here/cswap-vm" --build "$build" --mem "$mem_mib" --timeout "$timeout_s" --out "$out" \
    --kernel-args "cswapvm.probe_arg=1 cswapvm.probe_arg2=1" \
    -- sh -c 'cat /proc/cmdline > cmdline; exec "$@"' sh \
    env BUILD="$build" FILL_CHECK_PASSES=1 ${WORKLOAD_MIB:+WORKLOAD_MIB=$WORKLOAD_MIB} "$here/guest-swap" "$device" fill-check >"$out_root/$device.log" 2>&1
  vm_rc=$?
  # A host without the test bed (or a tree the guest cannot see, under
  # /tmp) skips the whole test at its first VM.
  [ "$vm_rc" != 77 ] || skip "$(grep 'skipped:' "$out_root/$device.log" | head -1)"
  line=$out/output.log
  sed 's/^/# /' "$out_root/$device.log" | tail -2
  check "$device: --kernel-args reach the guest's command line, both parameters" \
    eval 'grep -qw cswapvm.probe_arg=1 "$out/cmdline" && grep -qw cswapvm.probe_arg2=1 "$out/cmdline"'
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
# An option given without its value is refused by name, with no VM booted
# (after the VMs: a host without the test bed skips at the first).
for option in --mem --kernel-args; do
  check "cswap-vm $option with no value is refused, naming it" \
    eval '"$here/cswap-vm" "$option" 2>&1 | grep -q -- "$option needs a value"'
done
done_testing
