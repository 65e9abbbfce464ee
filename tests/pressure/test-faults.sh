#!/bin/bash
# cswap fault injection under load: the swap workload swaps through
# cswap-fuse -> loop while the daemon's writeback or control plane fails.
# One scenario per run:
#   eio        the backing file fails 30% of batch writes with EIO
#              (CSWAP_TIER_FAULT=eio:30, the fault layer tier/io-fault.c,
#              which only the test build cswap-fuse-faults has);
#   enospc     a thin backing file (backing-prealloc=no) on a 24 MiB ext4
#              image that fills up: its batches fail with ENOSPC;
#   pool-full  a pool limit and a backing file that are both too small for
#              the moments of peak load: writes find no room and get ENOSPC
#              (the kernel keeps those pages in memory and retries), until
#              the tier's cleaner frees segments;
#   ctl-flood  rounds of 100 control clients at once sending junk
#              (ctl-flood.py) for the whole run.
# Checks, each scenario: every byte the workload reads back is right (0
# mismatches, exit 0), the error was counted (backing_io_errors,
# backing_enospc_errors, pool_limit_hits; the flood's connections), the
# daemon answered `stats` every 0.5 s throughout (three tries 0.2 s apart
# per sample: past 64 clients the daemon refuses connections, by design),
# and it never swapped (VmSwap 0 kB).
#
# Usage: test-faults.sh eio|enospc|pool-full|ctl-flood
# Root only; bounded in time; everything torn down in the EXIT trap.
set -uo pipefail
source "$(dirname "$0")/../swap/swap-lib.sh"
source "$(dirname "$0")/pressure-lib.sh"

scenario=${1:?usage: $0 eio|enospc|pool-full|ctl-flood}
limit_mib=128
size_mib=384
seconds=20

require_root
require_cmd losetup mkswap swapon jq timeout
: "${CSWAP_BUILD_ROOT:?run through meson test}"
work=$CLEANUP_DIR/$scenario
mkdir -p "$work"
DAEMON_ENV=()
backing=$(mktemp /var/tmp/cswap-faults-backing.XXXXXX) || bail_out "mktemp"
cleanup_push rm -f "$backing"

case $scenario in
  eio)
    DAEMON_ENV=(CSWAP_TIER_FAULT=eio:30)
    DAEMON_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse-faults
    options=(pool-limit=16M "backing=$backing" backing-size=512M)
    counter=backing_io_errors
    ;;
  enospc)
    require_cmd mkfs.ext4 mount umount
    mkdir -p "$work/ext4"
    truncate -s 24M "$work/ext4.img" || bail_out "truncate failed"
    mkfs.ext4 -q -F "$work/ext4.img" || bail_out "mkfs.ext4 failed"
    mount -o loop "$work/ext4.img" "$work/ext4" || bail_out "mount ext4 image failed"
    # Registered before the daemon starts, so it runs after the daemon
    # has stopped (the stack unwinds in reverse).  -l: never hang here.
    cleanup_push umount -l "$work/ext4"
    # The disk fills for certain: idle writeback sends every page left
    # alone for a second, so the tier wants more than the filesystem's
    # ~20 MiB within seconds.  (Pool-limit writeback alone peaked right at
    # the disk's size: one run in CI filled it not once.)  The pool holds
    # the whole workload (about 55 MiB compressed): with less room,
    # swap-outs fail and the kernel retries them for minutes (pool-full
    # below), which this scenario does not test.
    size_mib=256
    options=(pool-limit=64M idle-writeback=1 "backing=$work/ext4/backing"
             backing-size=48M backing-prealloc=no)
    counter=backing_enospc_errors
    ;;
  pool-full)
    size_mib=256
    # ~25 MiB of compressed pages out at the peak: 8 MiB of pool and a
    # 32 MiB backing file that the log-structured tier fills with stale
    # copies, so the cleaner must make room while writes wait or fail.
    # (With 8 + 16 MiB nothing fits: the kernel retries the failing
    # swap-outs forever and the workload makes no progress, a livelock the
    # memcg OOM killer does not break; the workload's timeout does.)
    options=(pool-limit=8M "backing=$backing" backing-size=32M)
    counter=pool_limit_hits
    ;;
  ctl-flood)
    options=(pool-limit=24M "backing=$backing" backing-size=512M)
    counter=written_back_pages
    ;;
  *)
    bail_out "unknown scenario $scenario"
    ;;
esac

start_front_end fuse "$work/dev" "${options[@]}"
dev=$(attach_loop "$device_file") || exit
swap_on "$dev"
diag "$scenario: swapping to $dev -> cswap-fuse (pid $daemon_pid) ${options[*]} ${DAEMON_ENV[*]}"
start_ctl_sampler "$work/samples" 0.5
if [[ $scenario == ctl-flood ]]; then
  (
    if [[ -n ${SWAP_LOCK_FD:-} ]]; then exec {SWAP_LOCK_FD}>&-; fi
    exec timeout 120 /usr/bin/python3 "$(dirname "$0")/ctl-flood.py" "$ctl_sock" \
      $((seconds + 25)) >"$work/flood.json"
  ) &
  flood_pid=$!
  cleanup_push kill -KILL "$flood_pid"
fi

started=$SECONDS
SWAP_WORKLOAD_TIMEOUT_S=$((seconds + 200)) \
  run_swap_workload "$scenario" "$limit_mib" "$size_mib" "$seconds" --write-percent 20
diag "$scenario: workload took $((SECONDS - started))s"

if [[ $scenario == ctl-flood ]]; then
  wait_pid_gone "$flood_pid" 60
  flood=$(cat "$work/flood.json")
  diag "ctl-flood: $flood"
  check "ctl-flood: the flood ran (${flood:-no output})" \
    test "$(jq -r .connections <<<"${flood:-{\}}" 2>/dev/null || echo 0)" -gt 1000
fi
stats=$(timeout 10 "${cswapctl[@]}" stats)
check "$scenario: the daemon answers stats after the run" test -n "$stats"
value=$(jq -r --arg k "$counter" '.[$k]' <<<"${stats:-{\}}")
check "$scenario: $counter=$value > 0" test "${value:-0}" -gt 0
for field in backing_io_errors backing_enospc_errors pool_limit_hits failed_writes \
  written_back_pages read_errors backing_checksum_errors; do
  diag "$scenario: $field=$(jq -r --arg k "$field" '.[$k]' <<<"${stats:-{\}}")"
done
read_errors=$(jq -r .read_errors <<<"${stats:-{\}}")
check "$scenario: no read error (read_errors=$read_errors)" test "${read_errors:-1}" -eq 0
stop_sampler "$sampler_pid"
sampler_summary "$work/samples"
check "$scenario: every stats answered ($samples_failed of $samples samples failed)" \
  test "$samples" -gt 0 -a "$samples_failed" -eq 0
check "$scenario: daemon never swapped (VmSwap max ${vmswap_max_kb} kB)" \
  test "$vmswap_max_kb" -eq 0
diag "$scenario: daemon RSS peak $(mib "$rss_max") MiB"
tap_done
