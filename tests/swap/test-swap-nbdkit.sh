#!/bin/bash
# cswap end to end through NBD: nbdkit + the cswap plugin -> nbdfuse ->
# losetup --direct-io=on -> mkswap -> swapon --discard=pages, then a
# workload three times its memory cgroup's limit, every byte it reads
# verified.  Afterwards, with the workload gone and swap off, the plugin
# must hold (almost) nothing: the kernel's discards freed the slots.
#
# Root only; bounded in time; everything torn down in the EXIT trap.
set -uo pipefail
source "$(dirname "$0")/swap-lib.sh"

require_root
require_cmd nbdkit nbdfuse losetup mkswap swapon fusermount3
[[ -e /dev/fuse ]] || skip_all "no /dev/fuse"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
plugin=$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so
limit_mib=${SWAP_TEST_LIMIT_MIB:-128}
size_mib=${SWAP_TEST_SIZE_MIB:-384}
seconds=${SWAP_TEST_SECONDS:-20}

work=$CLEANUP_DIR/nbdkit
mkdir -p "$work/mnt"
nbdkit --foreground --exit-with-parent --unix "$work/sock" \
  --pidfile "$work/nbdkit.pid" "$plugin" size=1G 2>"$work/nbdkit.log" &
nbdkit_pid=$!
cleanup_push stop_daemon "$nbdkit_pid"
wait_for "[[ -s $work/nbdkit.pid ]]" 20 || bail_out "nbdkit did not start: $(cat "$work/nbdkit.log")"

nbdfuse -P "$work/nbdfuse.pid" "$work/mnt/swap" --unix "$work/sock" &
nbdfuse_pid=$!
cleanup_push fuse_unmount "$work/mnt" "$nbdfuse_pid"
wait_for "[[ -s $work/nbdfuse.pid ]]" 20 || bail_out "nbdfuse did not mount"

dev=$(attach_loop "$work/mnt/swap") || exit
swap_on "$dev"
diag "swapping to $dev -> nbdfuse -> nbdkit cswap (pid $nbdkit_pid)"
run_swap_workload "nbdkit path" "$limit_mib" "$size_mib" "$seconds"

# Tear down in order now, so that the plugin's exit stats can be read.
cleanup_run_now
stats=$(grep '^cswap: stats' "$work/nbdkit.log")
diag "$stats"
stored=$(sed -n 's/.* pages_stored=\([0-9]*\) .*/\1/p' <<<"$stats")
failed=$(sed -n 's/.* failed_writes=\([0-9]*\) .*/\1/p' <<<"$stats")
check "after swapoff the plugin holds ${stored:-?} pages (≤ 16: the swap header and little else)" \
  test "${stored:-999999}" -le 16
check "no write failed in the plugin (${failed:-?})" test "${failed:-1}" -eq 0
tap_done
