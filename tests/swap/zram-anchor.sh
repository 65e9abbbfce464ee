#!/bin/bash
# cswap: the kernel's zram through the swap harness — the anchor that cswap's
# swap numbers are read against, and the proof that the harness works.
#
# usage: zram-anchor.sh [CG_LIMIT_MIB [WORKLOAD_MIB [SECONDS]]]
#        (defaults 128, 384, 30; env ZRAM_ALGORITHM=lz4, ZRAM_DISKSIZE=1G,
#        and the swap-lib.sh variables)
#
# Stdout: two JSON lines, the workload's and
#   {"bench":"zram-anchor", …mm_stat fields…, "ratio":…, "pswpin_delta":…, …}
# with mm_stat read by the workload's --snapshot-cmd after its touch phase,
# while its pages are still in zram (after it exits zram is empty again).
# TAP checks go to stderr.  Exit 0 if all passed, 1 if not, 77 if skipped.
#
# Not a meson test: it takes a minute and measures rather than tests.

TAP_FD=2
# shellcheck source-path=SCRIPTDIR source=swap-lib.sh
. "$(dirname "$0")/swap-lib.sh"

cg_limit_mib=${1:-128}
workload_mib=${2:-384}
run_seconds=${3:-30}
algorithm=${ZRAM_ALGORITHM:-lz4}
disksize=${ZRAM_DISKSIZE:-1G}

require_root
require_cmd mkswap swapon swapoff flock jq timeout

# Both run from the cleanup stack (shellcheck cannot see the calls).
# shellcheck disable=SC2317
zram_hot_remove ()
{
  echo "$1" >/sys/class/zram-control/hot_remove
}

# shellcheck disable=SC2317
zram_reset ()
{
  echo 1 >"/sys/block/$1/reset"
}

# A device of our own from hot_add rather than zram0, which may be someone
# else's; the module is loaded first if needed (and unloaded at the end).
if [[ ! -d /sys/class/zram-control ]]; then
  require_cmd modprobe
  modprobe zram || skip_all "no zram: modprobe zram failed"
  cleanup_push modprobe -r zram
fi
[[ -e /sys/class/zram-control/hot_add ]] || skip_all "no /sys/class/zram-control/hot_add"
zram_id=$(cat /sys/class/zram-control/hot_add) || bail_out "zram hot_add failed"
zram=zram$zram_id
cleanup_push zram_hot_remove "$zram_id"
sysfs=/sys/block/$zram

grep -qw "$algorithm" "$sysfs/comp_algorithm" \
  || skip_all "$zram has no $algorithm (has: $(cat "$sysfs/comp_algorithm"))"
cleanup_push zram_reset "$zram"
echo "$algorithm" >"$sysfs/comp_algorithm" || bail_out "cannot set $zram comp_algorithm"
echo "$disksize" >"$sysfs/disksize" || bail_out "cannot set $zram disksize"

swap_on "/dev/$zram"

export SWAP_SNAPSHOT_CMD="cat $sysfs/mm_stat >$CLEANUP_DIR/mm_stat"
run_swap_workload "zram $algorithm" "$cg_limit_mib" "$workload_mib" "$run_seconds"
echo "$SWAP_WORKLOAD_JSON"

if [[ -s $CLEANUP_DIR/mm_stat ]]; then
  read -r orig compr used limit used_max same compacted huge _ <"$CLEANUP_DIR/mm_stat"
  jq -nc --arg alg "$algorithm" --argjson disk "$(cat "$sysfs/disksize")" \
    --argjson orig "$orig" --argjson compr "$compr" --argjson used "$used" \
    --argjson limit "$limit" --argjson used_max "$used_max" --argjson same "$same" \
    --argjson compacted "$compacted" --argjson huge "$huge" \
    --argjson in "$SWAP_PSWPIN_DELTA" --argjson out "$SWAP_PSWPOUT_DELTA" \
    --argjson cg "$cg_limit_mib" --argjson size "$workload_mib" \
    '{bench: "zram-anchor", algorithm: $alg, disksize_bytes: $disk,
      cg_limit_mib: $cg, workload_mib: $size,
      orig_data_size: $orig, compr_data_size: $compr, mem_used_total: $used,
      mem_limit: $limit, mem_used_max: $used_max, same_pages: $same,
      pages_compacted: $compacted, huge_pages: $huge,
      ratio: (if $used > 0 then ($orig / $used * 1000 | round) / 1000 else null end),
      compr_ratio: (if $compr > 0 then ($orig / $compr * 1000 | round) / 1000 else null end),
      pswpin_delta: $in, pswpout_delta: $out}'
  check "zram $algorithm: zram held data at the snapshot" test "$orig" -gt 0
else
  check "zram $algorithm: mm_stat snapshot taken" false
fi
tap_done
