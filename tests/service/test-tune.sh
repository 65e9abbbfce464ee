#!/bin/bash
# shellcheck disable=SC2016  # eval strings expand later, on purpose
# cswap: `cswap tune` and `cswap untune` (halt-poll, min-free, page-cluster and zswap in
# cswap.conf(5)) on a simulated /sys and /proc/sys (CSWAP_SYSFS,
# CSWAP_PROC_SYS), so that the machine's own setting is never
# touched: with the haltpoll cpuidle driver and guest_halt_poll_ns at 0,
# tune sets the kernel's default (200000) and untune puts 0 back; tune
# leaves polling that is on, another driver, a kernel without the module
# and halt-poll=keep alone; untune leaves a value someone changed since;
# `cswap down` with nothing up still puts it back.  zswap is turned off
# where it is on, and back on after; `cswap check` says what up will do
# to it, or warns where zswap=keep leaves it in front of cswap.
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/sanitizer-env.sh"
source "$(dirname "$0")/../lib/tap.sh"
[[ $(id -u) -eq 0 ]] || skip "tune and untune need root"

export CSWAP_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
dir=$(mktemp -d /tmp/cswap-tune.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export CSWAP_STATE_DIR=$dir/state CSWAP_SYSFS=$dir/sys CSWAP_PROC_SYS=$dir/proc-sys
export CSWAP_MEMINFO=$dir/meminfo
export CSWAP_SLEEP_CONF_DIR=$dir/sleep.conf.d
sleep_conf=$CSWAP_SLEEP_CONF_DIR/zz-cswap.conf
param=$dir/sys/module/haltpoll/parameters/guest_halt_poll_ns
driver=$dir/sys/devices/system/cpu/cpuidle/current_driver
saved=$CSWAP_STATE_DIR/halt-poll-was
min_free=$dir/proc-sys/vm/min_free_kbytes
min_free_saved=$CSWAP_STATE_DIR/min-free-was
page_cluster=$dir/proc-sys/vm/page-cluster
page_cluster_saved=$CSWAP_STATE_DIR/page-cluster-was
zswap=$dir/sys/module/zswap/parameters/enabled
zswap_saved=$CSWAP_STATE_DIR/zswap-was

equals () { [[ $(cat "$1" 2>/dev/null) == "$2" ]]; }

# machine DRIVER NS [CONFIG-LINE]: a fresh simulated /sys, /proc/sys and
# state (vm.min_free_kbytes $MIN_FREE, default 2048, a small machine's;
# vm.page-cluster $PAGE_CLUSTER, default 3, the kernel's; zswap's enabled
# $ZSWAP, default N, as the kernel's default is; MemTotal $MEM_KIB,
# default 16 GiB).
machine ()
{
  rm -rf "$dir/sys" "$dir/proc-sys" "$CSWAP_STATE_DIR"
  mkdir -p "${param%/*}" "${driver%/*}" "${min_free%/*}" "${zswap%/*}"
  echo "$1" >"$driver"
  echo "$2" >"$param"
  echo "${MIN_FREE:-2048}" >"$min_free"
  echo "${PAGE_CLUSTER:-3}" >"$page_cluster"
  printf 'MemTotal:       %s kB\nMemFree:          100000 kB\n' "${MEM_KIB:-16777216}" >"$CSWAP_MEMINFO"
  echo "${ZSWAP:-N}" >"$zswap"
  printf 'size = 64M\n%s\n' "${3:-}" >"$dir/cswap.conf"
}
cswap () { bash "$CSWAP_BUILD_ROOT/systemd/cswap" -c "$dir/cswap.conf" "$@" 2>&1; }

machine haltpoll 0
out=$(cswap tune)
rc=$?; sed "s/^/# /" <<<"$out"
check "tune exits 0" test $rc -eq 0
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

# Hibernation: refused while up (a sleep.conf drop-in), allowed after.
machine haltpoll 0
out=$(cswap tune)
check "tune refuses hibernation: the drop-in turns it off" \
  grep -q "^AllowHibernation=no" "$sleep_conf"
check "and hybrid sleep and suspend-then-hibernate" \
  eval 'grep -q "^AllowHybridSleep=no" "$sleep_conf" && grep -q "^AllowSuspendThenHibernate=no" "$sleep_conf"'
check "tune says so" grep -q "hibernation: refused while cswap is up" <<<"$out"
cswap untune >/dev/null
check "untune removes the drop-in" test ! -e "$sleep_conf"
touch "$dir/not-a-dir"
out=$(export CSWAP_SLEEP_CONF_DIR=$dir/not-a-dir/sleep.conf.d
      machine haltpoll 0; cswap tune; echo "rc=$?")
check "where it cannot write it, tune warns and goes on" \
  eval '[[ $out == *"cannot write"*"hibernation is not refused"* && $out == *rc=0* ]]'

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
check "no haltpoll module: tune exits 0 and does nothing" \
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
check "down with nothing up still puts polling back" equals "$param" 0

# raised NAME FILE SAVED OLD NEW SAID: on a fresh machine, tune raises
# the setting NAME in FILE from OLD to NEW, records OLD in SAVED and says
# SAID; untune puts OLD back and forgets it.
raised ()
{
  local name=$1 file=$2 saved=$3 old=$4 new=$5 said=$6 out
  machine acpi_idle 0
  out=$(cswap tune)
  check "tune raises $name from $old to $new" equals "$file" "$new"
  check "tune records the old $name" equals "$saved" "$old"
  check "tune says what it did to $name" grep -qF "$said" <<<"$out"
  cswap untune >/dev/null
  check "untune puts $name back to $old" equals "$file" "$old"
  check "untune forgets the old $name" test ! -e "$saved"
}

# min-free: raised to 16384 KiB where lower (on 16 GiB), put back after.
raised min_free_kbytes "$min_free" "$min_free_saved" 2048 16384 "vm.min_free_kbytes: 16384 KiB"

# A 160 MiB VM (107 MiB MemTotal): a twentieth of it, not 16 MiB, which
# there took what fill-check needed.
MEM_KIB=109568 machine acpi_idle 0
cswap tune >/dev/null
check "on 107 MiB of RAM, tune raises min_free_kbytes to 5478" equals "$min_free" 5478
cswap untune >/dev/null
check "and untune puts 2048 back" equals "$min_free" 2048
# At 320 MiB and up, the 16 MiB a 384 MiB VM's nbd path needed.
MEM_KIB=337920 machine acpi_idle 0
cswap tune >/dev/null
check "on 330 MiB of RAM, 16384 (a twentieth is more)" equals "$min_free" 16384

# left_alone NAME FILE SAVED KEY VARIABLE HIGHER OLD CHANGED: tune leaves
# the setting NAME in FILE alone where it is HIGHER already (the machine's
# VARIABLE), recording nothing in SAVED, and under KEY = keep (OLD stays);
# untune leaves it where it was CHANGED since tune.
left_alone ()
{
  local name=$1 file=$2 saved=$3 key=$4 variable=$5 higher=$6 old=$7 changed=$8
  (declare "$variable=$higher"; machine acpi_idle 0)
  cswap tune >/dev/null
  check "$name already higher ($higher): tune leaves it" equals "$file" "$higher"
  check "$name higher: nothing recorded" test ! -e "$saved"
  machine acpi_idle 0 "$key = keep"
  cswap tune >/dev/null
  check "$key=keep: tune leaves $old" equals "$file" "$old"
  machine acpi_idle 0
  cswap tune >/dev/null
  echo "$changed" >"$file"
  cswap untune >/dev/null
  check "$name changed since tune ($changed): untune leaves it" equals "$file" "$changed"
}
left_alone min_free_kbytes "$min_free" "$min_free_saved" min-free MIN_FREE 67584 2048 4096

machine acpi_idle 0
cswap tune >/dev/null
cswap down >/dev/null
check "down with nothing up puts min_free_kbytes back" equals "$min_free" 2048

# page-cluster: raised to 5 where lower, put back after.
raised page-cluster "$page_cluster" "$page_cluster_saved" 3 5 \
  "vm.page-cluster: 5 while cswap is up (was 3; page-cluster=keep leaves it)"
PAGE_CLUSTER=0 machine acpi_idle 0
cswap tune >/dev/null
check "page-cluster 0 (as for zram alone): tune raises it to 5" equals "$page_cluster" 5
cswap down >/dev/null
check "and down puts 0 back" equals "$page_cluster" 0
left_alone page-cluster "$page_cluster" "$page_cluster_saved" page-cluster PAGE_CLUSTER 6 3 4

machine haltpoll 0 "min-free = never"
out=$(cswap tune)
check "tune refuses a bad min-free (exit 2): $out" test $? -eq 2
check "a bad min-free changes nothing" equals "$min_free" 2048

# zswap: turned off where it is on (it would compress every page before
# cswap does), turned back on after.
ZSWAP=Y machine acpi_idle 0
out=$(cswap tune)
rc=$?; sed "s/^/# /" <<<"$out"
check "zswap on: tune exits 0" test $rc -eq 0
check "tune turns zswap off" equals "$zswap" N
check "tune records that zswap was on" equals "$zswap_saved" Y
check "tune says it turned zswap off" grep -q "zswap: N while cswap is up (was Y; zswap=keep" <<<"$out"
check "tune says why: zswap compresses first" grep -q "zswap compresses every page before" <<<"$out"
cswap tune >/dev/null
check "tune again keeps the record that zswap was on" equals "$zswap_saved" Y
cswap untune >/dev/null
check "untune turns zswap back on" equals "$zswap" Y
check "untune forgets that zswap was on" test ! -e "$zswap_saved"

machine acpi_idle 0
out=$(cswap tune)
check "zswap already off: tune leaves it off" equals "$zswap" N
check "zswap already off: nothing recorded, nothing said" \
  eval '[[ ! -e $zswap_saved && $out != *zswap* ]]'
cswap untune >/dev/null
check "zswap already off: untune leaves it off" equals "$zswap" N

ZSWAP=Y machine acpi_idle 0
rm -rf "$dir/sys/module/zswap"
out=$(cswap tune)
rc=$?
check "no zswap in the kernel: tune exits 0, silent, records nothing" \
  eval '[[ $rc -eq 0 && ! -e $zswap_saved && $out != *zswap* ]]'

ZSWAP=Y machine acpi_idle 0 "zswap = keep"
out=$(cswap tune)
check "zswap=keep: tune leaves zswap on" equals "$zswap" Y
check "zswap=keep: nothing recorded" test ! -e "$zswap_saved"
check "zswap=keep: tune warns that zswap stays in front" \
  grep -q "zswap=keep leaves it on: zswap compresses every page before" <<<"$out"

ZSWAP=Y machine acpi_idle 0
cswap tune >/dev/null
cswap down >/dev/null
check "down with nothing up turns zswap back on" equals "$zswap" Y

# cswap check: what up will do to zswap; it changes nothing itself.
ZSWAP=Y machine acpi_idle 0
out=$(cswap check)
rc=$?; sed "s/^/# /" <<<"$out"
check "zswap on: check exits 0" test $rc -eq 0
check "zswap on: check says up turns it off" \
  grep -q "^# zswap is on.*'cswap up' turns it off while cswap is up" <<<"$out"
check "check leaves zswap on" equals "$zswap" Y
ZSWAP=Y machine acpi_idle 0 "zswap = keep"
out=$(cswap check)
rc=$?
check "zswap=keep: check exits 0 and warns that zswap stays in front" \
  eval '[[ $rc -eq 0 && $out == *"zswap=keep leaves it on: zswap compresses every page before"* ]]'
machine acpi_idle 0
out=$(cswap check)
check "zswap off: check says nothing of it" eval '[[ $out != *zswap* ]]'

ZSWAP=Y machine acpi_idle 0 "zswap = no"
out=$(cswap tune)
check "tune refuses a bad zswap (exit 2): $out" test $? -eq 2
check "a bad zswap changes nothing" equals "$zswap" Y

machine haltpoll 0 "halt-poll = sometimes"
out=$(cswap tune)
check "tune refuses a bad halt-poll (exit 2): $out" test $? -eq 2
check "a bad halt-poll changes nothing" equals "$param" 0

done_testing
