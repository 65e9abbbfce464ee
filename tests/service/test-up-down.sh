#!/bin/bash
# shellcheck disable=SC2016,SC2317,SC2001  # eval and --run strings expand later, on purpose
# cswap: `cswap up` then `cswap down` on the FUSE path, with a private
# state directory and configuration so that it cannot touch a real
# installation: the 1 GiB file is swapped on as the default ladder (loop
# devices of 64, 64, 128, 256 and 512 MiB over consecutive windows, at
# priorities 42 down to 38) with direct I/O, `cswap status` and cswapctl
# answer, `up` again is a no-op, and `down` leaves nothing mounted,
# attached or running.
#
# Then the refusal: a workload in a memory cgroup (limit 64 MiB, OOM
# killer off) holds pages on the device; swapoff must bring them back
# into that full cgroup, fails with ENOMEM, and `cswap down` must refuse
# (exit 4) with swap, loop devices and daemon all still up.  Once the
# workload is gone, `cswap down` succeeds.
#
# Then a crash: the daemon is killed (SIGKILL, as the OOM killer or a
# crash would end it) while a workload has pages in swap.  `cswap status`
# says the daemon is gone and what was lost; `cswap down` clears the dead
# swap devices, loop devices, FUSE mount and socket; `cswap up` works
# again.  Killed once more, `cswap up` clears the leftovers by itself.
#
# Guest halt polling (halt-poll=auto) and zswap (zswap=off) on a
# simulated /sys: `up` turns polling on and zswap off, the refused `down`
# leaves them so, the successful one puts them back.  The same for the
# sleep.conf drop-in that refuses hibernation while cswap is up (in a
# directory of the test's; systemd-analyze reads it as systemd would).
set -uo pipefail
source "$CSWAP_SOURCE_ROOT/tests/swap/swap-lib.sh"

require_root
require_cmd losetup mkswap swapon swapoff fusermount3 python3
[[ -c /dev/fuse ]] || skip_all "no /dev/fuse"
: "${CSWAP_BUILD_ROOT:?run through meson test}"

export CSWAP_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
export CSWAPCTL=$CSWAP_BUILD_ROOT/control/cswapctl
export CSWAP_STATE_DIR=$CLEANUP_DIR/state
# The default backing file there, not in the machine's /var/lib/cswap.
export CSWAP_BACKING_DIR=$CLEANUP_DIR/lib
# The machine's own halt polling and zswap are not the test's to change.
export CSWAP_SYSFS=$CLEANUP_DIR/sys
halt_poll=$CSWAP_SYSFS/module/haltpoll/parameters/guest_halt_poll_ns
zswap=$CSWAP_SYSFS/module/zswap/parameters/enabled
mkdir -p "${halt_poll%/*}" "${zswap%/*}" "$CSWAP_SYSFS/devices/system/cpu/cpuidle"
echo haltpoll >"$CSWAP_SYSFS/devices/system/cpu/cpuidle/current_driver"
echo 0 >"$halt_poll"
echo Y >"$zswap"
sleep_root=$CLEANUP_DIR/root
export CSWAP_SLEEP_CONF_DIR=$sleep_root/run/systemd/sleep.conf.d
# hibernation_refused: systemd's merged sleep.conf under $sleep_root turns
# hibernation off; the file is ours.
hibernation_refused ()
{
  local merged
  merged=$(systemd-analyze --root="$sleep_root" cat-config systemd/sleep.conf 2>/dev/null) || return 1
  grep -q "^# .*/run/systemd/sleep.conf.d/zz-cswap.conf" <<<"$merged" \
    && grep -q "^AllowHibernation=no" <<<"$merged"
}
cswap=(bash "$CSWAP_BUILD_ROOT/systemd/cswap" -c "$CLEANUP_DIR/cswap.conf")
cat >"$CLEANUP_DIR/cswap.conf" <<EOF2
size = 1G
mountpoint = $CSWAP_STATE_DIR/mnt
priority = 42
# Every step swapped on at up, for the checks of each below (the
# default, auto, follows here: test-ladder-follow.sh).
ladder-online = all
# The machine's own readahead is not the test's to change (test-tune.sh
# checks what up does to it).
page-cluster = keep
EOF2

swap_lock
[[ $(wc -l </proc/swaps) -le 1 ]] || skip_all "other swap devices are active"
# `cswap up` turns FUSE over io_uring on: put back what was there, last.
source "$CSWAP_SOURCE_ROOT/tests/lib/enable-uring.sh"
if enable_uring_save; then
  cleanup_push enable_uring_restore
  enable_uring_set N
fi
# cswap_run NAME ARG…: cswap ARG…, its output in $CLEANUP_DIR/NAME.out and
# the log; sets status.
cswap_run ()
{
  local name=$1; shift
  "${cswap[@]}" "$@" >"$CLEANUP_DIR/$name.out" 2>&1
  status=$?
  sed 's/^/# /' "$CLEANUP_DIR/$name.out"
}

# Whatever happens, down at the end (after the memcg is gone).
final_down () { "${cswap[@]}" --timeout 120 down >&2; }
cleanup_push final_down

cswap_run up up
check "cswap up exits 0" test "$status" -eq 0
state_devices () { sed -n 's/^devices=//p' "$CSWAP_STATE_DIR/state"; }
state_pid () { sed -n 's/^pid=//p' "$CSWAP_STATE_DIR/state"; }
read -ra devs <<<"$(state_devices)"
pid=$(state_pid)
[[ ${#devs[@]} -gt 0 && -n $pid ]] || bail_out "no devices or pid in $CSWAP_STATE_DIR/state"
dev=${devs[0]}
check "the ladder has 5 devices (${devs[*]})" test "${#devs[@]}" -eq 5
check "up turned guest halt polling on ($(cat "$halt_poll") ns)" \
  test "$(cat "$halt_poll")" -eq 200000
check "up turned zswap off" test "$(cat "$zswap")" = N
check "up said why zswap is off" grep -q "zswap compresses every page before" "$CLEANUP_DIR/up.out"
check "up refused hibernation (systemd's sleep.conf: AllowHibernation=no)" hibernation_refused
check "and said so" grep -q "hibernation: refused while cswap is up" "$CLEANUP_DIR/up.out"
want_offset=0
for i in "${!devs[@]}"; do
  d=${devs[$i]}
  want_mib=$((i == 0 ? 64 : 64 << (i - 1)))
  check "$d is in /proc/swaps with priority $((42 - i))" \
    eval 'awk -v d="$d" -v p=$((42 - i)) '"'"'$1 == d && $5 == p { f = 1 } END { exit !f }'"'"' /proc/swaps'
  check "$d has direct I/O" test "$(cat "/sys/block/${d#/dev/}/loop/dio")" = 1
  check "$d is the FUSE file from $((want_offset >> 20)) MiB, $want_mib MiB long" \
    eval '[[ $(losetup -n -O BACK-FILE,OFFSET,SIZELIMIT "$d") =~ /mnt/swap\ +$want_offset\ +$((want_mib << 20))$ ]]'
  want_offset=$((want_offset + (want_mib << 20)))
done
check "the daemon $pid runs" kill -0 "$pid"
if [[ -n $enable_uring_saved ]]; then
  check "cswap up turned FUSE over io_uring on" \
    test "$(cat "$ENABLE_URING_PARAM")" = Y
  check "and the daemon serves over it" \
    grep -q "^cswap-fuse: transport: io_uring" "$CSWAP_STATE_DIR/daemon.log"
fi

"${cswap[@]}" up >"$CLEANUP_DIR/up2.out" 2>&1
status=$?
check "cswap up again: already up, exit 0" \
  eval '[[ $status -eq 0 ]] && grep -q "already up" "$CLEANUP_DIR/up2.out"'

out=$("${cswap[@]}" status 2>&1)
status=$?
sed 's/^/# /' <<<"$out"
check "cswap status exits 0 and says active" \
  eval '[[ $status -eq 0 && $out == *"active: ${devs[*]}"* ]]'
if [[ -x $CSWAPCTL ]]; then
  check "cswap status shows cswapctl stats" grep -q RATIO <<<"$out"
fi

# ---- the refusal: swapoff fails while a full memcg holds swapped pages ----
# used_kib DEV: DEV's Used in /proc/swaps (empty if it is not swap).
used_kib () { awk -v d="$1" '$1 == d { print $4 }' /proc/swaps; }

start_holder hold 64 256
diag "$(cat /proc/swaps)"
used=0
for d in "${devs[@]}"; do used=$((used + $(used_kib "$d"))); done
check "the workload swapped out (${used} KiB)" test "$used" -gt $((128 << 10))
check "the highest priority device filled first ($(used_kib "$dev") KiB)" \
  test "$(used_kib "$dev")" -gt $((32 << 10))
check "the last step of the ladder stayed empty" test "$(used_kib "${devs[4]}")" -eq 0
# Now that it sleeps: with the OOM killer off, the memcg cannot make room,
# so swapoff's charges fail (ENOMEM) instead of killing the workload.
echo 1 >"$cg/memory.oom_control" || bail_out "cannot disable the memcg OOM killer"

cswap_run down --timeout 60 down
check "cswap down refuses while swapoff fails (exit $status, want 4)" test "$status" -eq 4
check "the refusal says the device is still swap" grep -q "still swap" "$CLEANUP_DIR/down.out"
for d in "${devs[@]}"; do
  check "after the refusal $d is swap (again)" test -n "$(used_kib "$d")"
done
check "after the refusal the daemon still runs" kill -0 "$pid"
check "after the refusal the state is kept" test -e "$CSWAP_STATE_DIR/state"
check "the workload survived" kill -0 "$holder"
check "after the refusal halt polling stays on" test "$(cat "$halt_poll")" -eq 200000
check "after the refusal zswap stays off" test "$(cat "$zswap")" = N
check "after the refusal hibernation stays refused" hibernation_refused

# The workload goes: now down works.
stop_holder
cswap_run down2 --timeout 120 down
check "cswap down exits 0" test "$status" -eq 0
check "down put halt polling back to 0" test "$(cat "$halt_poll")" -eq 0
check "down turned zswap back on" test "$(cat "$zswap")" = Y
check "down allowed hibernation again (the drop-in is gone)" \
  test ! -e "$CSWAP_SLEEP_CONF_DIR/zz-cswap.conf"
for d in "${devs[@]}"; do
  check "$d is no longer swap" test -z "$(used_kib "$d")"
  check "$d is detached" eval '! losetup "$d" >/dev/null 2>&1'
done
check "the daemon $pid is gone" eval '! kill -0 "$pid" 2>/dev/null'
check "nothing is mounted on $CSWAP_STATE_DIR/mnt" eval '! mountpoint -q "$CSWAP_STATE_DIR/mnt"'
check "the state is removed" test ! -e "$CSWAP_STATE_DIR/state"
"${cswap[@]}" status >/dev/null 2>&1
status=$?
check "cswap status then exits 3 (not up)" test "$status" -eq 3
"${cswap[@]}" down >/dev/null 2>&1
status=$?
check "cswap down again: nothing to do, exit 0" test "$status" -eq 0

# ---- a crash: the daemon is killed with pages in swap ----
# kill_daemon: SIGKILL, and wait until the process is gone.
kill_daemon ()
{
  pid=$(state_pid)
  kill -KILL "$pid"
  wait_pid_gone "$pid" 30 || bail_out "the killed daemon $pid did not go"
}

# check_cleared WHAT: nothing of the killed daemon is left.
check_cleared ()
{
  local d
  for d in "${devs[@]}"; do
    check "$1: $d is no longer swap" test -z "$(used_kib "$d")"
  done
  check "$1: no loop device over the dead file is left" \
    eval '! losetup -n -O BACK-FILE | grep -q "$CSWAP_STATE_DIR/mnt/swap"'
  check "$1: the dead FUSE mount is gone" \
    eval '! awk -v d="$CSWAP_STATE_DIR/mnt" '"'"'$5 == d { f = 1 } END { exit !f }'"'"' /proc/self/mountinfo'
  check "$1: the stale socket is gone" test ! -e "$CSWAP_STATE_DIR/cswap.sock"
}

"${cswap[@]}" up >"$CLEANUP_DIR/up3.out" 2>&1 || bail_out "cswap up after down failed: $(cat "$CLEANUP_DIR/up3.out")"
read -ra devs <<<"$(state_devices)"
start_holder crash 64 256
kill_daemon
out=$("${cswap[@]}" status 2>&1)
status=$?
sed 's/^/# /' <<<"$out"
check "after the kill, cswap status exits 3" test "$status" -eq 3
check "and says the daemon is gone" grep -q "daemon ($pid) is gone" <<<"$out"
check "and that the pages in swap are lost" grep -q "KiB in swap on .* are lost" <<<"$out"
check "and what to run" grep -q "down' clears what it left" <<<"$out"
stop_holder

cswap_run down3 --timeout 120 down
check "cswap down after the kill exits 0" test "$status" -eq 0
check_cleared "down after the kill"
check "the state is removed" test ! -e "$CSWAP_STATE_DIR/state"

cswap_run up4 up
check "cswap up after that exits 0" test "$status" -eq 0
read -ra devs <<<"$(state_devices)"
kill_daemon
cswap_run up5 up
check "killed again, cswap up clears the leftovers and exits 0" \
  eval '[[ $status -eq 0 ]] && grep -q "is gone: clearing" "$CLEANUP_DIR/up5.out"'
new_pid=$(state_pid)
check "a new daemon ($new_pid) serves" \
  eval '[[ $new_pid != "$pid" ]] && kill -0 "$new_pid"'
read -ra devs <<<"$(state_devices)"
check "and its ladder is swap" eval '[[ ${#devs[@]} -eq 5 && -n $(used_kib "${devs[0]}") ]]'
"${cswap[@]}" --timeout 120 down >/dev/null 2>&1
check "cswap down at the end exits 0" test "$?" -eq 0

# A remote device that cannot be connected (port 1: nothing listens; on
# this host often no nbd driver either) leaves the local device up, and
# `up` says so with exit 1; `down` then takes the local one down.
cat >>"$CLEANUP_DIR/cswap.conf" <<EOF2
remote = 127.0.0.1
remote-port = 1
EOF2
cswap_run up-remote up
check "with an unreachable remote, cswap up exits 1" test "$status" -eq 1
check "and says the local device is up and the remote is not" \
  grep -q "the local device is up, the remote one (127.0.0.1:1) is not" "$CLEANUP_DIR/up-remote.out"
read -ra devs <<<"$(state_devices)"
check "the local ladder is swap" eval '[[ ${#devs[@]} -eq 5 && -n $(used_kib "${devs[0]}") ]]'
check "no remote device is recorded" test ! -e "$CSWAP_STATE_DIR/remote"
cswap_run remote-up-again remote-up
check "cswap remote-up alone tries again, and exits 1" test "$status" -eq 1
check "leaving the local ladder swap" eval '[[ -n $(used_kib "${devs[0]}") ]]'
cswap_run status-remote status
check "cswap status exits 0: the local device is up" test "$status" -eq 0
cswap_run down-remote --timeout 120 down
check "cswap down exits 0" test "$status" -eq 0
check "and leaves no state" test ! -e "$CSWAP_STATE_DIR/state"

# frontend = remote runs no daemon: `run` and `attach` refuse, `up` with
# the remote unreachable fails and leaves nothing.
sed -i '1i frontend = remote' "$CLEANUP_DIR/cswap.conf"
cswap_run run-remote run
check "frontend = remote: cswap run refuses with exit 2" test "$status" -eq 2
check "and says there is no daemon to run" grep -q "frontend = remote runs no daemon" "$CLEANUP_DIR/run-remote.out"
cswap_run up-remote-only up
check "frontend = remote, unreachable: cswap up exits 1" test "$status" -eq 1
check "and leaves no state" test ! -e "$CSWAP_STATE_DIR/state"
cswap_run status-remote-only status
check "cswap status then exits 3" test "$status" -eq 3
cswap_run remote-down-none remote-down
check "cswap remote-down with nothing up exits 0" test "$status" -eq 0
sed -i '/^remote/d; /^frontend/d' "$CLEANUP_DIR/cswap.conf"
cswap_run remote-up-none remote-up
check "cswap remote-up without remote = HOST exits 2" test "$status" -eq 2
check "and says so" grep -q "no remote = HOST" "$CLEANUP_DIR/remote-up-none.out"
tap_done
