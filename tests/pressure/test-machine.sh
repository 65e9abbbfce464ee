#!/bin/bash
# cswap under whole-machine pressure, CI profile: the machine shrunk to
# two memory cgroups.
#
# Why not the whole machine: filling this 24 GiB machine and then 1 GiB
# more means ~25 GiB of page faults and ~1+ GiB through a ~30 MB/s
# userspace swap path at the moment free memory is at the kernel's
# watermarks, where every other user of the (shared) machine stalls too;
# a watchdog floor on MemAvailable high enough to be safe (512 MiB) would
# stop the workload before the kernel swaps at all, since global reclaim
# only starts near the watermarks.  The real deadlock risk is not the
# size of the machine but the daemon needing memory to serve a swap-out
# while memory is short: so the daemon (cswap-fuse, lock-memory=yes, the
# only swap) runs in its own memory cgroup with a tight limit (pool-limit
# + reserve + 32 MiB, half the soak's allowance), and the workload in another
# at a third of its size.  If serving swap needed memory beyond the
# daemon's limit, the daemon would hit its cgroup's limit with locked
# (unreclaimable) memory: it would be OOM-killed or stall, the workload
# with it.
#
# A watchdog reports progress every second (TAP diag lines: pswpout,
# pswpin, MemAvailable, the daemon's RSS and cgroup usage) and kills the
# workload if MemAvailable drops below 512 MiB or swap makes no progress
# for 30 s; the workload also runs under a hard `timeout`.
#
# Checks: the workload finished in time, 0 mismatches; the watchdog never
# fired; the daemon is alive, nothing in its cgroup was OOM-killed
# (oom_kill 0, under_oom 0; failcnt, the times the cgroup hit its limit, is
# reported), it answered `stats` throughout and never swapped (VmSwap 0 kB).
#
# Root only; bounded in time; everything torn down in the EXIT trap.
set -uo pipefail
source "$(dirname "$0")/../swap/swap-lib.sh"
source "$(dirname "$0")/pressure-lib.sh"

limit_mib=128
size_mib=384
seconds=30
pool_limit_mib=24
reserve_mib=8
# 32 MiB over pool + reserve: the daemon's measured peak here is ~47 MiB
# (RSS 49 MiB), so the cgroup runs at ~75% of its limit with most of it
# locked.
daemon_limit_mib=$((pool_limit_mib + reserve_mib + 32))
floor_mib=512
stall_s=30

require_root
require_cmd losetup mkswap swapon jq timeout
: "${CSWAP_BUILD_ROOT:?run through meson test}"
work=$CLEANUP_DIR/machine
mkdir -p "$work"
backing=$(mktemp /var/tmp/cswap-machine-backing.XXXXXX) || bail_out "mktemp"
cleanup_push rm -f "$backing"
daemon_cg=$(make_memcg daemon $((daemon_limit_mib << 20))) || exit
DAEMON_MEMCG=$daemon_cg
start_front_end fuse "$work/dev" pool-limit=${pool_limit_mib}M \
  reserve=${reserve_mib}M lock-memory=yes "backing=$backing" backing-size=1G
dev=$(attach_loop "$device_file") || exit
swap_on "$dev"
diag "swapping to $dev -> cswap-fuse (pid $daemon_pid) in $daemon_cg (limit $daemon_limit_mib MiB)"
check "the daemon runs in its cgroup" grep -qx "$daemon_pid" "$daemon_cg/cgroup.procs"
start_ctl_sampler "$work/samples" 0.5

# The watchdog: one diag line a second; kills the workload (everything in
# its cgroup) if MemAvailable falls under the floor or swap stalls.
workload_cg=$MEMCG_ROOT/cswap-test-$$-workload
(
  if [[ -n ${SWAP_LOCK_FD:-} ]]; then exec {SWAP_LOCK_FD}>&-; fi
  trap - EXIT
  trap 'exit 0' TERM
  start=$SECONDS out0=$(vmstat_get pswpout) in0=$(vmstat_get pswpin)
  last_moves=-1 last_move_at=$SECONDS
  while sleep 1; do
    avail=$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)
    out=$(($(vmstat_get pswpout) - out0)) in=$(($(vmstat_get pswpin) - in0))
    usage=$(($(cat "$daemon_cg/memory.usage_in_bytes") >> 20))
    diag "watchdog: $((SECONDS - start))s pswpout +$out pswpin +$in MemAvailable ${avail} MiB" \
      "daemon RSS $(($(proc_status_kb "$daemon_pid" VmRSS) >> 10)) MiB cgroup ${usage} MiB" \
      "failcnt $(cat "$daemon_cg/memory.failcnt")"
    if [[ $((out + in)) -ne $last_moves ]]; then
      last_moves=$((out + in)) last_move_at=$SECONDS
    fi
    why=
    [[ $avail -lt $floor_mib ]] && why="MemAvailable ${avail} MiB < $floor_mib MiB"
    if [[ -d $workload_cg && $((SECONDS - last_move_at)) -ge $stall_s ]]; then
      why="no swap progress for ${stall_s}s"
    fi
    if [[ -n $why ]]; then
      echo "$why" >"$work/watchdog-fired"
      diag "watchdog: $why: killing the workload"
      [[ -d $workload_cg ]] && xargs -r kill -KILL <"$workload_cg/cgroup.procs"
    fi
  done
) &
watchdog_pid=$!
cleanup_push stop_sampler "$watchdog_pid"

started=$SECONDS
SWAP_WORKLOAD_TIMEOUT_S=$((seconds + 150)) \
  run_swap_workload machine "$limit_mib" "$size_mib" "$seconds" --write-percent 20
diag "machine: workload took $((SECONDS - started))s"
stop_sampler "$watchdog_pid"
check "the watchdog never fired ($(cat "$work/watchdog-fired" 2>/dev/null || echo quiet))" \
  test ! -e "$work/watchdog-fired"
check "the daemon is alive" kill -0 "$daemon_pid"
failcnt=$(cat "$daemon_cg/memory.failcnt")
peak=$(($(cat "$daemon_cg/memory.max_usage_in_bytes") >> 20))
diag "machine: daemon cgroup peak $peak MiB of $daemon_limit_mib MiB, failcnt $failcnt"
check "no OOM in the daemon's cgroup (peak $peak MiB of $daemon_limit_mib MiB)" \
  grep -qx "under_oom 0" "$daemon_cg/memory.oom_control"
check "nothing OOM-killed in the daemon's cgroup" \
  grep -qx "oom_kill 0" "$daemon_cg/memory.oom_control"
diag "machine: daemon cgroup oom_control: $(tr '\n' ' ' <"$daemon_cg/memory.oom_control")"
written_back=$(stat_now written_back_pages) || written_back=0
diag "machine: written_back_pages=$written_back"
stop_sampler "$sampler_pid"
sampler_summary "$work/samples"
check "machine: every stats answered ($samples_failed of $samples samples failed)" \
  test "$samples" -gt 0 -a "$samples_failed" -eq 0
swap_end=$(proc_status_kb "$daemon_pid" VmSwap)
check "machine: daemon never swapped (VmSwap max ${vmswap_max_kb} kB, ${swap_end:-?} kB at end)" \
  test "$vmswap_max_kb" -eq 0 -a "${swap_end:-1}" -eq 0
diag "machine: daemon RSS peak $(mib "$rss_max") MiB"
tap_done
