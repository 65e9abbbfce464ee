#!/bin/bash
# cswap: a real memory-pressure event makes cswap-fuse compact its pool,
# with no command (issue #15).  No swap: the pressure is page-cache
# thrashing confined to a memory cgroup of the test's own.
#
#   1. A daemon with compact-threshold=100, so that the per-second path
#      cannot fire while any object lives: only the PSI path can compact.
#   2. Its pool fragmented: 1024 pages of hex text (about 1.9 KiB each
#      compressed, two to a zspage) written with O_DIRECT, then every
#      other one punched out: 256 pages freeable.
#   3. 2.5 quiet seconds: nothing compacts.  If the machine's own
#      pressure compacts the pool meanwhile, fragment it again; after three
#      such tries the test cannot tell who caused what: skip.
#   4. Four readers in a 32 MiB cgroup v1 memory group cycle through a
#      44 MiB file on disk.  Each evicted page comes back within the
#      group's working set, so its refault counts as a memory stall, as
#      does the group's reclaim: measured on a 2-core VM, 240-480 ms of
#      "some" stall a second (the trigger wants 150 ms in 2 s); the
#      trigger fired 0-2.9 s into the load.  One reader gave 40-120 ms a
#      second: not enough to rely on.  16 MiB and 22 MiB stalled as much
#      but now and then OOM-killed a reader: with this disk's 8 MiB
#      readahead, four readers can have 32 MiB on the way in.
#   5. The load runs until pressure_compactions rises and for at least
#      2 s (one trigger window, so that the stall measured is mostly its
#      own), at most 20 s.  The group's working-set refaults show it
#      thrashed; then the pool has nothing freeable left, pool_bytes
#      fell, auto_compactions is still 0, and every page reads back.
#
# PSI is machine-wide, so the test runs alone (is_parallel: false) and
# /proc/pressure/memory's totals are logged.  Skips
# without PSI, when the kernel refuses the daemon's trigger, without a
# cgroup v1 memory controller, or when /var/tmp is not on a disk.
# Leaves nothing: the EXIT trap kills the readers, removes the cgroup and
# the file, and stops the daemon by its pid.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/fuse-daemon.sh"

psi=/proc/pressure/memory
memcg_root=/sys/fs/cgroup/memory
limit_mib=32
file_mib=44
readers=4
wait_s=20
pages=1024

[ -r "$psi" ] || skip "no $psi: this kernel has no PSI (CONFIG_PSI, psi=1)"
# The daemon's trigger (store/auto-compact.c, PSI_TRIGGER), asked for
# here: a refusal is the machine's (skip), a daemon that does not watch
# is a failure.  The kernel ends the string at the last byte written.
probe_psi () {
  local fd
  exec {fd}<>"$psi" || return 1
  printf 'some 150000 2000000\n' >&"$fd"
  local r=$?
  exec {fd}>&-
  return $r
}
probe_psi 2>/dev/null ||
  skip "the kernel refuses the PSI trigger 'some 150000 2000000' on $psi"
[ -w "$memcg_root/cgroup.procs" ] ||
  skip "no cgroup v1 memory controller at $memcg_root"
case $(stat -f -c %T /var/tmp) in
  tmpfs|ramfs) skip "/var/tmp is in memory: its pages cannot be evicted without swap" ;;
esac

sock=$tmp/psi.sock
mnt=$tmp/mnt-psi
cg=$memcg_root/cswap-test-$$-psi
thrash_file=$(mktemp /var/tmp/cswap-psi-test.XXXXXX)
ctl () { "$cswapctl" --socket "$sock" --json "$@"; }
stat_of () { ctl stats | jq -r ".$1"; }
pool_freeable () { ctl classes | jq '[.classes[].pages_freeable] | add'; }
now_ms () { echo $((${EPOCHREALTIME/[.,]/} / 1000)); }
psi_some_us () { sed -n 's/^some .* total=\([0-9]*\)$/\1/p' "$psi"; }

# Removes the file (which stops the readers at the end of their pass),
# kills whatever is left in the cgroup (only readers can be), and removes
# it; the daemon goes next, in fuse-daemon.sh's trap.
stop_thrash () {
  local procs
  rm -f "$thrash_file"
  if [ -d "$cg" ]; then
    for _ in $(seq 50); do
      mapfile -t procs <"$cg/cgroup.procs"
      [ ${#procs[@]} -gt 0 ] || break
      kill -KILL "${procs[@]}" 2>/dev/null
      sleep 0.1
    done
    rmdir "$cg"
  fi
}
trap 'stop_thrash; stop_fuse_daemons' EXIT

# settle: waits until the compressor thread has no page queued.
settle () {
  for _ in $(seq 100); do
    [ "$(stat_of deferred_pages)" = 0 ] && return 0
    sleep 0.1
  done
  return 1
}

# The load's file, written past the page cache: pages cached now would be
# charged to this shell's group, and the readers would never fault.
dd if=/dev/urandom of="$thrash_file" bs=1M count=$file_mib oflag=direct \
   status=none || skip "no O_DIRECT on /var/tmp: the file would stay cached"
# Swappiness 0: the readers' own few pages never go to a swap device that
# another test or benchmark may have on.
if ! mkdir "$cg" || ! echo $((limit_mib << 20)) >"$cg/memory.limit_in_bytes" ||
   ! echo 0 >"$cg/memory.swappiness"; then
  echo "Bail out! cannot make the memory cgroup $cg"
  exit 1
fi
start_fuse psi --size 64M --compact-threshold=100

# ---------------------------------------------------------- fragment ----

# fragment FIRST: writes pages FIRST.. afresh, punches out every other
# one, and waits for the compressor.  $tmp/pages is what they must read
# back as.  Each try takes fresh pages: rewriting pages the pool has just
# compacted left from 0 to 61 pages freeable.
fragment () {
  local first=$1 page
  head -c $((pages * 4096 / 3)) /dev/urandom | od -An -v -tx1 |
    head -c $((pages * 4096)) >"$tmp/pages"
  dd if="$tmp/pages" of="$mnt/swap" bs=4096 seek="$first" oflag=direct \
     conv=notrunc status=none
  for page in $(seq 0 2 $((pages - 1))); do
    fallocate --punch-hole --keep-size -o $(((first + page) * 4096)) -l 4096 \
      "$mnt/swap"
    fallocate --punch-hole --keep-size -o $((page * 4096)) -l 4096 "$tmp/pages"
  done
  settle
}

# -------------------------------------------------------------- quiet ----

# Fragmented, then 2.5 s with no compaction of either kind.  The machine's
# own pressure may compact the pool meanwhile (other tests' swap, a
# benchmark): then fragment again, three times at most.
for attempt in 1 2 3; do
  first=$(((attempt - 1) * pages))
  pressure_before=$(stat_of pressure_compactions)
  fragment "$first"
  freeable_before=$(pool_freeable)
  pool_before=$(stat_of pool_bytes)
  compacted_before=$(stat_of pages_compacted)
  echo "# fragmented: pool_bytes $pool_before, $freeable_before pages freeable"
  some0=$(psi_some_us)
  sleep 2.5
  some1=$(psi_some_us)
  echo "# quiet 2.5 s: PSI some +$(((some1 - some0) / 1000)) ms"
  [ "$(stat_of pressure_compactions)" = "$pressure_before" ] && break
  [ "$attempt" = 3 ] &&
    skip "the machine's own memory pressure compacted the pool in each of 3 quiet periods (the last: $(((some1 - some0) / 1000)) ms of stall in 2.5 s): cannot tell what the test's load would cause"
  echo "# the machine's own pressure compacted the pool: fragmenting again"
  fallocate --punch-hole --keep-size -o $((first * 4096)) -l $((pages * 4096)) \
    "$mnt/swap"
done
# No check is printed before here, so that the skip above is a plain one.
check "the daemon watches PSI (psi_trigger 1)" test "$(stat_of psi_trigger)" = 1
check "the pool is fragmented: $freeable_before pages freeable (the pressure path needs 16)" \
  test "$freeable_before" -ge 64
check "2.5 s quiet: no compaction of either kind (the per-second path cannot reach compact-threshold=100)" \
  test "$(stat_of auto_compactions) $(stat_of pool_bytes)" = "0 $pool_before"

# ----------------------------------------------------------- pressure ----

some0=$(psi_some_us)
start_ms=$(now_ms)
# Each reader joins the group before its first read, reads until the file
# is gone, and stops by itself after wait_s even if this script is killed.
reader_pids=()
for _ in $(seq $readers); do
  # shellcheck disable=SC2016  # for the inner shells
  sh -c 'echo $$ >"$0/cgroup.procs" &&
         exec timeout "$1" sh -c "while [ -e \"\$0\" ]; do cat \"\$0\"; done" "$2"' \
     "$cg" "$wait_s" "$thrash_file" >/dev/null 2>&1 &
  reader_pids+=($!)
done
# At least one trigger window (2 s) of load, so that the stall measured
# is mostly the load's: the trigger may fire sooner, on its first new
# stall, when stall is left in its window from before.
fired_ms=
while [ "$(now_ms)" -lt $((start_ms + wait_s * 1000)) ]; do
  if [ -z "$fired_ms" ] &&
     [ "$(stat_of pressure_compactions)" != "$pressure_before" ]; then
    fired_ms=$(($(now_ms) - start_ms))
  fi
  [ -n "$fired_ms" ] && [ "$(now_ms)" -ge $((start_ms + 2000)) ] && break
  sleep 0.1
done
load_ms=$(($(now_ms) - start_ms))
some1=$(psi_some_us)
oom_kills=$(sed -n 's/^oom_kill //p' "$cg/memory.oom_control")
refaults=$(sed -n 's/^workingset_refault_file //p' "$cg/memory.stat")
rm -f "$thrash_file"
wait "${reader_pids[@]}"
stop_thrash
echo "# load: PSI some +$(((some1 - some0) / 1000)) ms in $load_ms ms ($readers readers, ${file_mib} MiB file, ${limit_mib} MiB group, ${oom_kills:-no} readers OOM-killed)"
# PSI is machine-wide; the group's own refaults say the load did thrash
# (pgpgin would not: readers racing on the same pages charge and uncharge
# them, 120,000 times in 4 s for a file that fitted in the group).
if [ -n "$refaults" ]; then
  check "the load thrashed: $refaults working-set refaults in its group (≥ $((file_mib * 256)), one pass)" \
    test "$refaults" -ge $((file_mib * 256))
else
  echo "# no workingset_refault_file in $cg/memory.stat (an older kernel): whether the load thrashed is not checked"
fi
check "and the machine stalled: PSI some rose by $(((some1 - some0) / 1000)) ms (≥ 150 wanted)" \
  test $((some1 - some0)) -ge 150000
check "readers, cgroup and file are gone" test ! -e "$cg" -a ! -e "$thrash_file"

# ------------------------------------------------------------ result ----

settle
json=$(ctl stats)
echo "# after: $(jq -c '{pool_bytes, pages_compacted, objects_moved, auto_compactions, pressure_compactions}' <<<"$json")"
check "a pressure compaction ran ${fired_ms:-never} ms into the load, with no command" \
  test "$(jq .pressure_compactions <<<"$json")" -gt "$pressure_before"
check "it freed: pool_bytes $pool_before -> $(jq .pool_bytes <<<"$json"), $freeable_before -> $(pool_freeable) pages freeable" \
  test "$(jq .pool_bytes <<<"$json")" -lt "$pool_before" -a \
       "$(jq .pages_compacted <<<"$json")" -gt "$compacted_before" -a \
       "$(pool_freeable)" -lt "$freeable_before"
check "the per-second path did not run (auto_compactions 0)" \
  test "$(jq .auto_compactions <<<"$json")" = 0
check "every page reads back as written" \
  cmp -s "$tmp/pages" <(dd if="$mnt/swap" bs=4096 skip="$first" count=$pages \
                           iflag=direct status=none)
done_testing
