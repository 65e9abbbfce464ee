#!/bin/bash
# cswap end to end: the kernel swaps to cswap through one front end,
#   nbdkit  nbdkit + the cswap plugin -> nbdfuse -> loop
#   fuse    cswap-fuse -> loop
# then losetup --direct-io=on, mkswap, swapon --discard=pages, and a
# workload three times its memory cgroup's limit, every byte it reads
# verified.  Afterwards, with the workload gone, the daemon must give back
# what it held: the kernel discards a swap cluster once all its slots are
# free, and each discard must free the store's memory at once (read
# through the control socket while swap is still on).
#
# Usage: test-swap.sh nbdkit|fuse [DEVICE-OPTION=VALUE…]
# With transport=uring among the options, enable_uring is turned on for
# the run (and skipped if it cannot be).
# Environment: SWAP_TEST_BACKING_DIR=DIR adds backing=a fresh file in DIR
# (removed at exit); SWAP_STATS_CHECKS="FIELD-OP-NUMBER …" (OP one of
# -gt -ge -le -lt -eq, e.g. written_back_pages-gt-0) checks more fields of
# the daemon's exit stats line.
# Root only; bounded in time; everything torn down in the EXIT trap.
set -uo pipefail
source "$(dirname "$0")/swap-lib.sh"

front_end=${1:?usage: $0 nbdkit|fuse [OPTION=VALUE…]}
shift
extra_options=("$@")
limit_mib=${SWAP_TEST_LIMIT_MIB:-128}
size_mib=${SWAP_TEST_SIZE_MIB:-384}
seconds=${SWAP_TEST_SECONDS:-20}

require_root
require_cmd losetup mkswap swapon fusermount3
: "${CSWAP_BUILD_ROOT:?run through meson test}"
work=$CLEANUP_DIR/$front_end
device_options=("${extra_options[@]}")
# transport=uring needs FUSE over io_uring on for the run: taken after the
# swap lock (another swap test may hold it for long), put back at exit,
# after the daemon has stopped.
if [[ " ${device_options[*]} " == *" transport=uring "* ]]; then
  source "$(dirname "$0")/../lib/enable-uring.sh"
  swap_lock
  cleanup_push enable_uring_restore
  enable_uring_set Y || skip_all "cannot turn FUSE over io_uring on ($ENABLE_URING_PARAM)"
fi
if [[ -n ${SWAP_TEST_BACKING_DIR:-} ]]; then
  backing=$(mktemp "$SWAP_TEST_BACKING_DIR/cswap-swap-backing.XXXXXX") || bail_out "mktemp"
  cleanup_push rm -f "$backing"
  device_options+=("backing=$backing")
fi

# Sets device_file, daemon_pid, daemon_log and cswapctl.
start_front_end "$front_end" "$work" "${device_options[@]}"

dev=$(attach_loop "$device_file") || exit
swap_on "$dev"
diag "swapping to $dev -> $front_end (pid $daemon_pid) ${device_options[*]}"
run_swap_workload "$front_end" "$limit_mib" "$size_mib" "$seconds"

# The workload has exited and its swap slots are free.  Discards are
# asynchronous and per cluster, and a few slots may stay in the swap
# cache: wait (bounded) for the store to fall to 2% of the pages the
# workload swapped out, and at least to 16 pages of slack.
stored_now () {
  "${cswapctl[@]}" stats | jq -e .pages_stored
}
left_max=$((SWAP_PSWPOUT_DELTA / 50 > 16 ? SWAP_PSWPOUT_DELTA / 50 : 16))
wait_for "[[ \$(stored_now) -le $left_max ]]" 30
check "$front_end: discards freed the store: $(stored_now) pages left of $SWAP_PSWPOUT_DELTA swapped out (≤ $left_max)" \
  test "$(stored_now)" -le "$left_max"

# Tear down in order now, so that the daemon's exit stats can be read.
cleanup_run_now
wait "$daemon_pid" 2>/dev/null
daemon_status=$?
stats=$(grep '^cswap: stats' "$daemon_log")
diag "$stats"
# Without its exit line, say how the daemon ended, for the next reader.
[[ -n $stats ]] || diag "no exit stats: the daemon exited with status $daemon_status; its log ends: $(tail -n 5 "$daemon_log")"
stat_field () {
  sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$stats"
}
failed=$(stat_field failed_writes)
check "no write failed in $front_end (${failed:-?})" test "${failed:-1}" -eq 0
for stats_check in ${SWAP_STATS_CHECKS:-}; do
  IFS=- read -r field op number <<<"$stats_check"
  value=$(stat_field "$field")
  check "$front_end: $field=${value:-?} -$op $number" test "${value:-x}" "-$op" "$number"
done
tap_done
