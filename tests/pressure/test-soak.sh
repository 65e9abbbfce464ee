#!/bin/bash
# cswap pressure soak: the swap workload at four times its memory cgroup's
# limit (512 MiB in 128 MiB) swapping through one front end
#   nbdkit  nbdkit + the cswap plugin -> nbdfuse -> loop
#   fuse    cswap-fuse -> loop
# with a pool limit (24 MiB) well below the compressed working set (~80
# MiB of swapped corpus pages), so that writeback to a backing file in
# /var/tmp runs the whole time, while a background loop sends `compact`,
# `writeback max=256` and `stats` through cswapctl every 0.5 s.
#
# Checks: every byte verified (0 mismatches), pswpout grew,
# written_back_pages > 0, no failed write, every `stats` answered; the
# daemon's RSS (process_rss_bytes, sampled) stays below pool-limit +
# reserve + 64 MiB; its locked memory (VmLck, process_locked_bytes) is > 0
# with lock-memory=yes; it never appears in swap itself (VmSwap 0 kB at
# every sample and at the end).
#
# The 64 MiB allowance over pool-limit + reserve is for what is not pool:
# code and libraries (~10 MiB with zstd, lz4, libfuse/nbdkit), the slot
# table (8 bytes a page: 2 MiB for the 1 GiB device), thread stacks as far
# as they are touched (nbdkit's 16 worker threads, libfuse's up to 10), the
# tier's batch and cleaner buffers (~2 MiB), and the front end's request
# buffers (nbdkit's per-connection 64 MiB maximum request is never reached
# by loop's 4-512 KiB requests; FUSE's max_write is 1 MiB per thread).
#
# Usage: test-soak.sh nbdkit|fuse
# Environment: CSWAP_SOAK_SECONDS=N runs the touch phase for N seconds
# instead of the CI profile's 30 (fill and the final pass add ~40 s);
# past ~300 s, raise meson's 600 s timeout too, e.g.
#   CSWAP_SOAK_SECONDS=3600 meson test -C build -t 10 pressure-soak-fuse
# Root only; bounded in time; everything torn down in the EXIT trap.
set -uo pipefail
source "$(dirname "$0")/../swap/swap-lib.sh"
source "$(dirname "$0")/pressure-lib.sh"

front_end=${1:?usage: $0 nbdkit|fuse}
limit_mib=128
size_mib=512
seconds=${CSWAP_SOAK_SECONDS:-30}
pool_limit_mib=24
reserve_mib=8
allowance_mib=64

require_root
require_cmd losetup mkswap swapon jq timeout
: "${CSWAP_BUILD_ROOT:?run through meson test}"
work=$CLEANUP_DIR/$front_end
backing=$(mktemp /var/tmp/cswap-soak-backing.XXXXXX) || bail_out "mktemp"
cleanup_push rm -f "$backing"
start_front_end "$front_end" "$work" pool-limit=${pool_limit_mib}M \
  reserve=${reserve_mib}M lock-memory=yes "backing=$backing" backing-size=1G

dev=$(attach_loop "$device_file") || exit
swap_on "$dev"
diag "swapping to $dev -> $front_end (pid $daemon_pid), ${seconds}s touch phase"
samples_file=$work/samples
start_ctl_sampler "$samples_file" 0.5 compact "writeback max=256"
started=$SECONDS
SWAP_WORKLOAD_TIMEOUT_S=$((seconds + 240)) \
  run_swap_workload "$front_end" "$limit_mib" "$size_mib" "$seconds" --write-percent 20
diag "$front_end: workload took $((SECONDS - started))s"

written_back=$(stat_now written_back_pages) || written_back=0
check "$front_end: written_back_pages=$written_back > 0" test "$written_back" -gt 0
stop_sampler "$sampler_pid"
sampler_summary "$samples_file"
bound=$(((pool_limit_mib + reserve_mib + allowance_mib) << 20))
check "$front_end: every stats answered ($samples_failed of $samples samples failed)" \
  test "$samples" -gt 0 -a "$samples_failed" -eq 0
check "$front_end: daemon RSS peak $(mib "$rss_max") MiB < $(mib "$bound") MiB (pool-limit + reserve + ${allowance_mib} MiB)" \
  test "$rss_max" -gt 0 -a "$rss_max" -lt "$bound"
check "$front_end: daemon memory locked (VmLck min $((locked_min >> 10)) KiB > 0)" \
  test "$locked_min" -gt 0
swap_end=$(proc_status_kb "$daemon_pid" VmSwap)
check "$front_end: daemon never swapped (VmSwap max ${vmswap_max_kb} kB over samples, ${swap_end:-?} kB at end)" \
  test "$vmswap_max_kb" -eq 0 -a "${swap_end:-1}" -eq 0
if [[ -n ${nbdfuse_pid:-} ]]; then
  diag "nbdfuse (not locked, not ours): VmSwap $(proc_status_kb "$nbdfuse_pid" VmSwap) kB, VmRSS $(proc_status_kb "$nbdfuse_pid" VmRSS) kB"
fi
diag "$front_end: $(timeout 10 "${cswapctl[@]}" stats)"

cleanup_run_now
stats=$(grep '^cswap: stats' "$daemon_log")
failed=$(sed -n 's/.* failed_writes=\([0-9]*\).*/\1/p' <<<"$stats")
check "$front_end: no failed write (${failed:-?})" test "${failed:-1}" -eq 0
tap_done
