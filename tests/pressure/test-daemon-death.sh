#!/bin/bash
# cswap daemon death: the swap workload (384 MiB in a 128 MiB memory
# cgroup) swaps to cswap through one front end; once 64 MiB went out, the
# daemon holding the store is killed with SIGKILL while swap is on.
#
# Checks: the harness never hangs (every step is under a timeout); the
# swapped process dies of it instead of reading wrong data (its status is
# recorded: SIGBUS, from a swap-in that failed with EIO, is what the kernel
# does); and the host recovers with
#   swapoff DEV; losetup -d DEV; fusermount3 -u -z MOUNTPOINT
# (then stopping nbdfuse for the nbdkit front end): DEV is gone from
# /proc/swaps, the loop device is detached, the mount is gone.
#
# What happens (kernel 6.x, see the report lines "# death:"): every
# request to the dead device fails at once with EIO (cswap-fuse: the FUSE
# connection is aborted when its /dev/fuse descriptor closes, ENOTCONN;
# nbdkit: nbdfuse loses its NBD connection and answers EIO); nothing
# blocks.  A process touching a page that was swapped out gets SIGBUS;
# pages whose swap-out failed stay in memory (dirty, in the swap cache),
# so a process in a memory cgroup at its limit can no longer reclaim
# anything and the cgroup's OOM killer kills it (SIGKILL) — which of the
# two comes first is a race; with this workload (cgroup full of swap
# cache) it was SIGKILL from the memcg OOM killer within ~3 s.
# swapoff does not hang: it reads what it can, turns each unreadable page
# into a poisoned entry (the owner gets SIGBUS if it touches it), and
# succeeds once the owners are gone.  Memory in the dead device is lost;
# nothing is silently corrupted.
#
# Usage: test-daemon-death.sh nbdkit|fuse
# Root only; bounded in time; everything torn down in the EXIT trap.
set -uo pipefail
source "$(dirname "$0")/../swap/swap-lib.sh"
source "$(dirname "$0")/pressure-lib.sh"

front_end=${1:?usage: $0 nbdkit|fuse}
limit_mib=128
size_mib=384

require_root
require_cmd losetup mkswap swapon swapoff fusermount3 jq timeout
: "${CSWAP_BUILD_ROOT:?run through meson test}"
[[ -x $SWAP_WORKLOAD ]] || skip_all "$SWAP_WORKLOAD not built"
work=$CLEANUP_DIR/$front_end
start_front_end "$front_end" "$work"
dev=$(attach_loop "$device_file") || exit
swap_on "$dev"
cg=$(make_memcg workload $((limit_mib << 20))) || exit

out0=$(vmstat_get pswpout)
swapped_mib () { echo $((($(vmstat_get pswpout) - out0) * 4096 >> 20)); }
diag "swapping to $dev -> $front_end (pid $daemon_pid)"
(
  if [[ -n ${SWAP_LOCK_FD:-} ]]; then exec {SWAP_LOCK_FD}>&-; fi
  exec "$SWAP_WORKLOAD" --size "$size_mib" --seconds 120 --cgroup "$cg" \
    >"$work/workload.json" 2>"$work/workload.err"
) &
workload_pid=$!
cleanup_push kill -KILL "$workload_pid"
wait_for "[[ \$(swapped_mib) -ge 64 ]]" 60
check "64 MiB swapped out before the kill ($(swapped_mib) MiB)" test "$(swapped_mib)" -ge 64

kill -KILL "$daemon_pid"
killed_at=$SECONDS
wait_pid_gone "$daemon_pid" 10
check "daemon (pid $daemon_pid) gone after SIGKILL" test ! -d "/proc/$daemon_pid"

# The workload: let it run into a swapped page (it touches random pages
# for 120 s, and most of them are out).  Bounded: 60 s, then SIGKILL.
if wait_pid_gone "$workload_pid" 60; then
  wait "$workload_pid"; status=$?
else
  diag "death: workload still running 60 s after the kill: $(cat "/proc/$workload_pid/stat" 2>/dev/null)"
  kill -KILL "$workload_pid"; wait "$workload_pid"; status=$?
  status="hung($status)"
fi
if [[ $status =~ ^[0-9]+$ && $status -gt 128 ]]; then
  how="signal $((status - 128)) ($(kill -l $((status - 128))))"
else
  how="exit status $status"
fi
diag "death: workload ended $((SECONDS - killed_at)) s after the kill by $how"
diag "death: workload stderr: $(tail -n 3 "$work/workload.err" | tr '\n' ' ')"
check "the swapped process died of SIGBUS or an I/O error, not with a mismatch ($how)" \
  test "$status" = $((128 + 7)) -o "$status" = $((128 + 9))
# It prints its JSON line only at the end: none (killed) means no verdict.
mismatches=$(jq -r .mismatches "$work/workload.json" 2>/dev/null)
check "the workload reported no mismatch (${mismatches:-killed before reporting})" \
  test "${mismatches:-0}" = 0

# Recovery, each step bounded.
t=$SECONDS; timeout 120 swapoff "$dev"; rc=$?
diag "death: swapoff $dev: status $rc after $((SECONDS - t)) s"
check "swapoff succeeded (status $rc)" test "$rc" -eq 0
t=$SECONDS; timeout 30 losetup -d "$dev"; rc=$?
diag "death: losetup -d $dev: status $rc after $((SECONDS - t)) s"
t=$SECONDS; timeout 30 fusermount3 -u -z "$work/mnt"; rc=$?
diag "death: fusermount3 -u -z: status $rc after $((SECONDS - t)) s"
if [[ -n ${nbdfuse_pid:-} ]]; then stop_daemon "$nbdfuse_pid"; fi
wait_for "! losetup $dev >/dev/null 2>&1" 10
real=$(readlink -f "$dev")
check "$dev gone from /proc/swaps" bash -c "! grep -q '^$real ' /proc/swaps"
check "$dev detached" bash -c "! losetup $dev >/dev/null 2>&1"
check "$work/mnt unmounted" bash -c "! grep -q ' $work/mnt ' /proc/mounts"
tap_done
