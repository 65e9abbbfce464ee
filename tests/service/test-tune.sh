#!/bin/bash
# cswap: `cswap tune` and `cswap untune` (halt-poll in cswap.conf(5)) on a
# simulated /sys (CSWAP_SYSFS), so that the machine's own setting is never
# touched: with the haltpoll cpuidle driver and guest_halt_poll_ns at 0,
# tune sets the kernel's default (200000) and untune puts 0 back; tune
# leaves polling that is on, another driver, a kernel without the module
# and halt-poll=keep alone; untune leaves a value someone changed since;
# `cswap down` with nothing up still puts it back.
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/sanitizer-env.sh"
source "$(dirname "$0")/../lib/tap.sh"
[[ $(id -u) -eq 0 ]] || skip "tune and untune need root"

export CSWAP_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
dir=$(mktemp -d /tmp/cswap-tune.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export CSWAP_STATE_DIR=$dir/state CSWAP_SYSFS=$dir/sys
param=$dir/sys/module/haltpoll/parameters/guest_halt_poll_ns
driver=$dir/sys/devices/system/cpu/cpuidle/current_driver
saved=$CSWAP_STATE_DIR/halt-poll-was

equals () { [[ $(cat "$1" 2>/dev/null) == "$2" ]]; }

# machine DRIVER NS [CONFIG-LINE]: a fresh simulated /sys and state.
machine ()
{
  rm -rf "$dir/sys" "$CSWAP_STATE_DIR"
  mkdir -p "${param%/*}" "${driver%/*}"
  echo "$1" >"$driver"
  echo "$2" >"$param"
  printf 'size = 64M\n%s\n' "${3:-}" >"$dir/cswap.conf"
}
cswap () { bash "$CSWAP_BUILD_ROOT/systemd/cswap" -c "$dir/cswap.conf" "$@" 2>&1; }

machine haltpoll 0
out=$(cswap tune)
check "tune exits 0: $out" test $? -eq 0
check "tune sets polling to 200000 ns" equals "$param" 200000
check "tune records the old value" equals "$saved" 0
check "tune says what it did" grep -q "guest halt polling: 200000 ns" <<<"$out"
cswap tune >/dev/null
check "tune again keeps the first old value" equals "$saved" 0
out=$(cswap untune)
check "untune exits 0" test $? -eq 0
check "untune puts 0 back" equals "$param" 0
check "untune forgets the old value" test ! -e "$saved"
cswap untune >/dev/null
check "untune again changes nothing" equals "$param" 0

machine haltpoll 0 "halt-poll = keep"
cswap tune >/dev/null
check "halt-poll=keep: tune leaves 0" equals "$param" 0
check "halt-poll=keep: nothing recorded" test ! -e "$saved"

machine haltpoll 50000
cswap tune >/dev/null
check "polling already on (50000 ns): tune leaves it" equals "$param" 50000
check "polling already on: nothing recorded" test ! -e "$saved"

machine acpi_idle 0
cswap tune >/dev/null
check "another cpuidle driver: tune leaves the parameter" equals "$param" 0

machine haltpoll 0
rm -rf "$dir/sys/module"
out=$(cswap tune)
check "no haltpoll module: tune exits 0 and does nothing: $out" \
  test $? -eq 0 -a ! -e "$saved"

machine haltpoll 0
cswap tune >/dev/null
echo 100000 >"$param"
cswap untune >/dev/null
check "changed since tune (100000): untune leaves it" equals "$param" 100000
check "changed since tune: untune forgets the old value" test ! -e "$saved"

machine haltpoll 0
cswap tune >/dev/null
out=$(cswap down)
check "down with nothing up still puts polling back: $out" equals "$param" 0

machine haltpoll 0 "halt-poll = sometimes"
out=$(cswap tune)
check "tune refuses a bad halt-poll (exit 2): $out" test $? -eq 2
check "a bad halt-poll changes nothing" equals "$param" 0

done_testing
