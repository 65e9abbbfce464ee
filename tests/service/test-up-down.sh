#!/bin/bash
# shellcheck disable=SC2016,SC2317,SC2001  # eval and --run strings expand later, on purpose
# cswap: `cswap up` then `cswap down` on the FUSE path, with a private
# state directory and configuration so that it cannot touch a real
# installation: swap appears in /proc/swaps with direct I/O on its loop
# device, `cswap status` and cswapctl answer, `up` again is a no-op, and
# `down` leaves nothing mounted, attached or running.
#
# Then the refusal: a workload in a memory cgroup (limit 64 MiB, OOM
# killer off) holds pages on the device; swapoff must bring them back
# into that full cgroup, fails with ENOMEM, and `cswap down` must refuse
# (exit 4) with swap, loop device and daemon all still up.  Once the
# workload is gone, `cswap down` succeeds.
set -uo pipefail
source "$CSWAP_SOURCE_ROOT/tests/swap/swap-lib.sh"

require_root
require_cmd losetup mkswap swapon swapoff fusermount3 python3
[[ -c /dev/fuse ]] || skip_all "no /dev/fuse"
: "${CSWAP_BUILD_ROOT:?run through meson test}"

export CSWAP_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
export CSWAPCTL=$CSWAP_BUILD_ROOT/control/cswapctl
export CSWAP_STATE_DIR=$CLEANUP_DIR/state
cswap=(bash "$CSWAP_BUILD_ROOT/systemd/cswap" -c "$CLEANUP_DIR/cswap.conf")
cat >"$CLEANUP_DIR/cswap.conf" <<EOF2
size = 1G
mountpoint = $CSWAP_STATE_DIR/mnt
priority = 42
EOF2

swap_lock
[[ $(wc -l </proc/swaps) -le 1 ]] || skip_all "other swap devices are active"
# `cswap up` turns FUSE over io_uring on: put back what was there, last.
source "$CSWAP_SOURCE_ROOT/tests/lib/enable-uring.sh"
if enable_uring_save; then
  cleanup_push enable_uring_restore
  enable_uring_set N
fi
# Whatever happens, down at the end (after the memcg is gone).
final_down () { "${cswap[@]}" --timeout 120 down >&2; }
cleanup_push final_down

"${cswap[@]}" up >"$CLEANUP_DIR/up.out" 2>&1
status=$?
sed 's/^/# /' "$CLEANUP_DIR/up.out"
check "cswap up exits 0" test "$status" -eq 0
dev=$(sed -n 's/^device=//p' "$CSWAP_STATE_DIR/state")
pid=$(sed -n 's/^pid=//p' "$CSWAP_STATE_DIR/state")
[[ -n $dev && -n $pid ]] || bail_out "no device or pid in $CSWAP_STATE_DIR/state"
check "$dev is in /proc/swaps with priority 42" \
  eval 'awk -v d="$dev" '"'"'$1 == d && $5 == 42 { f = 1 } END { exit !f }'"'"' /proc/swaps'
check "$dev has direct I/O" test "$(cat "/sys/block/${dev#/dev/}/loop/dio")" = 1
check "$dev is backed by the FUSE file" \
  eval 'losetup -n -O BACK-FILE "$dev" | grep -q "/mnt/swap"'
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
  eval '[[ $status -eq 0 && $out == *"active: $dev"* ]]'
if [[ -x $CSWAPCTL ]]; then
  check "cswap status shows cswapctl stats" grep -q RATIO <<<"$out"
fi

# ---- the refusal: swapoff fails while a full memcg holds swapped pages ----
cg=$(make_memcg hold $((64 << 20))) || exit
python3 - "$cg" "$CLEANUP_DIR/ready" <<'PY' &
import os, sys, time
with open(sys.argv[1] + "/cgroup.procs", "w") as f:
    f.write(str(os.getpid()))
data = bytearray(256 << 20)            # 4x the limit: most of it swaps out
for i in range(0, len(data), 4096):
    data[i:i + 8] = i.to_bytes(8, "little")
open(sys.argv[2], "w").close()
time.sleep(3600)
PY
holder=$!
wait_for "[[ -e $CLEANUP_DIR/ready ]]" 120 || bail_out "the memcg workload did not fill"
used_kib=$(awk -v d="$dev" '$1 == d { print $4 }' /proc/swaps)
diag "the workload holds ${used_kib} KiB on $dev"
check "the workload swapped to $dev (${used_kib} KiB)" test "${used_kib:-0}" -gt $((64 << 10))
# Now that it sleeps: with the OOM killer off, the memcg cannot make room,
# so swapoff's charges fail (ENOMEM) instead of killing the workload.
echo 1 >"$cg/memory.oom_control" || bail_out "cannot disable the memcg OOM killer"

"${cswap[@]}" --timeout 60 down >"$CLEANUP_DIR/down.out" 2>&1
status=$?
sed 's/^/# /' "$CLEANUP_DIR/down.out"
check "cswap down refuses while swapoff fails (exit $status, want 4)" test "$status" -eq 4
check "the refusal says the device is still swap" grep -q "still swap" "$CLEANUP_DIR/down.out"
check "after the refusal $dev is still swap" \
  eval 'awk -v d="$dev" '"'"'$1 == d { f = 1 } END { exit !f }'"'"' /proc/swaps'
check "after the refusal the daemon still runs" kill -0 "$pid"
check "after the refusal the state is kept" test -e "$CSWAP_STATE_DIR/state"
check "the workload survived" kill -0 "$holder"

# The workload goes: now down works.
memcg_remove "$cg"
wait "$holder" 2>/dev/null
"${cswap[@]}" --timeout 120 down >"$CLEANUP_DIR/down2.out" 2>&1
status=$?
sed 's/^/# /' "$CLEANUP_DIR/down2.out"
check "cswap down exits 0" test "$status" -eq 0
check "$dev is no longer swap" eval '! grep -q "^$dev " /proc/swaps'
check "$dev is detached" eval '! losetup "$dev" >/dev/null 2>&1'
check "the daemon $pid is gone" eval '! kill -0 "$pid" 2>/dev/null'
check "nothing is mounted on $CSWAP_STATE_DIR/mnt" eval '! mountpoint -q "$CSWAP_STATE_DIR/mnt"'
check "the state is removed" test ! -e "$CSWAP_STATE_DIR/state"
"${cswap[@]}" status >/dev/null 2>&1
status=$?
check "cswap status then exits 3 (not up)" test "$status" -eq 3
"${cswap[@]}" down >/dev/null 2>&1
status=$?
check "cswap down again: nothing to do, exit 0" test "$status" -eq 0
tap_done
