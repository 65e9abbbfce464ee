#!/bin/bash
# cswap: the compressed memory server, seen from the kernel's own nbd
# client: tests/vm/guest-remote-exports, which says what it checks, in
# TAP, run in a 256 MiB VM (tests/vm/cswap-vm) with one CPU, since
# nothing in it is timed and CI runs it beside other tests; its TAP is
# passed on.  Skips where cswap-vm skips (no root, no qemu, no Debian
# kernel, no busybox).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${CSWAP_BUILD_ROOT:-$here/../../build}
out=$(mktemp -d /var/tmp/cswap-vm-remote.XXXXXX) || { echo "1..0 # SKIP mktemp failed"; exit 0; }
trap 'rm -rf "$out"' EXIT

"$here/cswap-vm" --build "$build" --mem 256 --cpus 1 --timeout 800 --out "$out/vm" \
  -- env BUILD="$build" "$here/guest-remote-exports" >"$out/vm.log" 2>&1
case $? in
  77) echo "1..0 # SKIP $(grep 'skipped:' "$out/vm.log" | head -1)"; exit 0 ;;
  124) echo "Bail out! the VM did not finish in 800 s; the guest's checks so far, then its console's end:"
       sed 's/^/# /' "$out/vm/output.log" 2>/dev/null
       tail -20 "$out/vm/console.log" | sed 's/^/# /'; exit 1 ;;
esac
sed 's/^/# /' "$out/vm.log" | head -3
if ! grep -q '^1\.\.' "$out/vm/output.log" 2>/dev/null; then
  echo "Bail out! the guest printed no plan: $(tail -5 "$out/vm/output.log" 2>/dev/null | tr '\n' ' ')"
  exit 1
fi
cat "$out/vm/output.log"
! grep -q '^not ok' "$out/vm/output.log"
