#!/bin/bash
# shellcheck disable=SC2016,SC2317  # eval strings expand later; cleanup functions run from the trap
# cswap: ladder-online = follow end to end, as the default (auto) gives
# it to the fuse front end without a backing file (backing = none: with
# one, auto is all).  `cswap up` with a 512 MiB FUSE device as a
# ladder of 16 MiB steps (16, 16, 32, 64, 128, 256 MiB) and a headroom of
# 6 MiB swaps on the first step only and hands the ladder to the daemon.  (A headroom under half the first step: a step
# goes off only while the others keep twice the headroom free, and the
# first gives 16 MiB less its header page.)  A workload in a 96 MiB
# memory cgroup then puts about 85 MiB in swap, three to four steps'
# worth, and checks every byte it reads back.  Meanwhile /proc/swaps is
# sampled every 20 ms:
#   - the workload's check passes, and nothing was OOM-killed;
#   - more steps were online at the peak than at the start (one);
#   - the free swap of the steps online never reached zero;
#   - the daemon counted its swapons and no failed one;
# and once the workload is gone:
#   - the extra steps go off again within 30 s, the first stays.
# Then a refused down: a holder in a memory cgroup with its OOM killer
# off keeps pages in three or four steps, swapoff fails, and `cswap down`
# exits 4 with those steps online again and the daemon following again;
# once the holder is gone the extra steps go off.  Then the follower,
# given a floor that keeps two steps on, stands aside when another
# process swaps step 1 off: the step stays off, `ladder` says so, the
# log names it.  `cswap down` then leaves
# no swap, loop device, mount, daemon or state.
# Not tighter: in a 40 MiB group, 112 MiB of workload thrashing for 8 s
# were OOM-killed in 3 of 6 runs with follow and in none of 3 with all,
# swap never full (doc/design.md, "Steps that follow the swap in use").
# Root only; under the swap lock; about 10 s, at most a few minutes, and
# the memory of the cgroup plus the daemon's pool (about 5 to 1);
# everything torn down in the EXIT trap, swap first.
set -uo pipefail
source "$CSWAP_SOURCE_ROOT/tests/swap/swap-lib.sh"

require_root
require_cmd losetup mkswap swapon swapoff fusermount3 python3 jq
[[ -c /dev/fuse ]] || skip_all "no /dev/fuse"
: "${CSWAP_BUILD_ROOT:?run through meson test}"

export CSWAP_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
export CSWAPCTL=$CSWAP_BUILD_ROOT/control/cswapctl
export CSWAP_STATE_DIR=$CLEANUP_DIR/state
# The default backing file there, not in the machine's /var/lib/cswap.
export CSWAP_BACKING_DIR=$CLEANUP_DIR/lib
cswap=(bash "$CSWAP_BUILD_ROOT/systemd/cswap" -c "$CLEANUP_DIR/cswap.conf")
ctl=("$CSWAPCTL" --socket "$CSWAP_STATE_DIR/cswap.sock")
mnt=$CSWAP_STATE_DIR/mnt
# The machine's own settings are not the test's to change.
cat >"$CLEANUP_DIR/cswap.conf" <<EOF2
size = 512M
mountpoint = $mnt
priority = 42
ladder-step = 16M
ladder-headroom = 6M
# A floor under the first step (16M less its header page): auto's, half
# this host's RAM, would keep every step online.  The check below sees
# it reach the daemon.
ladder-floor = 8M
# With a backing file auto is all (backing.sh, backing_settle_ladder).
backing = none
halt-poll = keep
min-free = keep
page-cluster = keep
zswap = keep
EOF2

swap_lock
[[ $(wc -l </proc/swaps) -le 1 ]] || skip_all "other swap devices are active"
# `cswap up` turns FUSE over io_uring on: put back what was there, last.
source "$CSWAP_SOURCE_ROOT/tests/lib/enable-uring.sh"
enable_uring_save && cleanup_push enable_uring_restore

state_get () { sed -n "s/^$1=//p" "$CSWAP_STATE_DIR/state" 2>/dev/null; }
# used_kib DEV: DEV's Used in /proc/swaps (empty if it is not swap).
used_kib () { awk -v d="$1" '$1 == d { print $4 }' /proc/swaps; }
# The recorded steps that are swap now.
online_steps ()
{
  local d n=0
  for d in "${devs[@]}"; do [[ -n $(used_kib "$d") ]] && n=$((n + 1)); done
  echo "$n"
}

# Whatever happens: down (after the memcg is gone), and should down fail,
# swap off and every loop device over the file detached all the same.
force_down ()
{
  local d pid i
  read -ra devs <<<"$(state_get devices)"
  "${ctl[@]}" ladder stop >/dev/null 2>&1
  for ((i = ${#devs[@]} - 1; i >= 0; i--)); do swapoff "${devs[$i]}" 2>/dev/null; done
  for d in $(losetup -n -O NAME -j "$mnt/swap" 2>/dev/null); do losetup -d "$d"; done
  pid=$(state_get pid)
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait_pid_gone "$pid" 10
  mountpoint -q "$mnt" && fusermount3 -u -z "$mnt"
}
final_down () { "${cswap[@]}" --timeout 120 down >&2 || force_down; }
cleanup_push final_down

"${cswap[@]}" up >"$CLEANUP_DIR/up.out" 2>&1
status=$?
diag "$(cat "$CLEANUP_DIR/up.out")"
[[ $status -eq 0 ]] || bail_out "cswap up failed ($status)"
read -ra devs <<<"$(state_get devices)"
pid=$(state_get pid)
check "the ladder has 6 steps (${devs[*]})" test "${#devs[@]}" -eq 6
check "up swapped on the first step only" \
  eval '[[ -n $(used_kib "${devs[0]}") && $(online_steps) -eq 1 ]]'
# The follower settles: with 24 MiB free and a headroom of 10, nothing to do.
sleep 2
start_online=$(online_steps)
check "at the start one step is online ($start_online)" test "$start_online" -eq 1
out=$("${cswap[@]}" status 2>&1)
status=$?
check "cswap status: active, the follower and its 1 of 6 steps online" \
  eval '[[ $status -eq 0 && $out == *"ladder:     follow, headroom 6M: 1 of 6 steps online"* ]]'
check "cswapctl ladder: following, step 0 online, the configured floor" \
  eval '"${ctl[@]}" ladder | grep -q "^following the swap in use: headroom 6M, .*, at least 8M online$" && "${ctl[@]}" ladder | grep -Eq "^ +0 ${devs[0]} .* yes "'

# /proc/swaps every 20 ms until told to stop: the most steps online, the
# least free swap on them, the most in use.
sampler_stop=$CLEANUP_DIR/sampler.stop
sampler_out=$CLEANUP_DIR/sampler.json
python3 - "${devs[*]}" "$sampler_stop" "$sampler_out" <<'PY' &
import json, os, sys, time
devices, stop, out = set(sys.argv[1].split()), sys.argv[2], sys.argv[3]
samples = max_online = peak_used = 0
min_free = None
while not os.path.exists(stop):
    online = free = used = 0
    with open("/proc/swaps") as f:
        for line in f.read().splitlines()[1:]:
            name, _, size, in_use, _ = line.split()
            if name in devices:
                online += 1
                free += int(size) - int(in_use)
                used += int(in_use)
    samples += 1
    max_online = max(max_online, online)
    peak_used = max(peak_used, used)
    if online:
        min_free = free if min_free is None else min(min_free, free)
    time.sleep(0.02)
with open(out, "w") as f:
    json.dump({"samples": samples, "max_online": max_online,
               "min_free_kib": min_free, "peak_used_kib": peak_used}, f)
PY
sampler=$!
stop_sampler () { kill "$sampler" 2>/dev/null; true; }
cleanup_push stop_sampler

oom0=$(vmstat_get oom_kill)
# 176 MiB in 96 MiB (a 4 MiB dictionary besides), 50,000 touches, 80% of
# them on a tenth of the pages, then every page read back: about 85 MiB
# in swap, which takes the follower from one step to four (16 + 16 + 32
# + 64).
SWAP_WORKLOAD_TIMEOUT_S=180 \
  run_swap_workload "ladder-online = follow" 96 176 60 --dict-pages 1024 \
    --hot-percent 10 --touches 50000
oom_kills=$(($(vmstat_get oom_kill) - oom0))
touch "$sampler_stop"
wait "$sampler"
sampled=$(cat "$sampler_out" 2>/dev/null) || sampled='{}'
diag "sampled /proc/swaps: $sampled"
max_online=$(jq -r '.max_online // 0' <<<"$sampled")
min_free=$(jq -r '.min_free_kib // 0' <<<"$sampled")
peak_used=$(jq -r '.peak_used_kib // 0' <<<"$sampled")
check "no OOM kill during the workload ($oom_kills)" test "$oom_kills" -eq 0
check "the workload put more than 2 steps' worth in swap (peak $((peak_used >> 10)) MiB)" \
  test "$peak_used" -gt $((48 << 10))
check "more steps were online at the peak ($max_online) than at the start ($start_online)" \
  test "$max_online" -gt "$start_online"
check "the free swap online never reached zero (least: $min_free KiB)" \
  test "$min_free" -gt 0
stats=$("${ctl[@]}" --json stats)
swapons=$(jq -r '.ladder_swapons' <<<"$stats")
errors=$(jq -r '.ladder_swap_errors' <<<"$stats")
check "the daemon swapped the steps on itself ($swapons swapons)" \
  test "$swapons" -ge $((max_online - 1))
check "no swapon or swapoff of the daemon's failed ($errors)" test "$errors" -eq 0

# The workload is gone, its slots free: the follower takes the extra
# steps off again, one a look (each second, or sooner).
start=$SECONDS
wait_for '[[ $(online_steps) -eq 1 ]]' 30
off_in=$((SECONDS - start))
diag "$(cat /proc/swaps)"
check "the extra steps went off within 30 s (in ${off_in} s), the first stays" \
  eval '[[ $(online_steps) -eq 1 && -n $(used_kib "${devs[0]}") ]]'
stats=$("${ctl[@]}" --json stats)
check "the daemon counted its swapoffs ($(jq -r .ladder_swapoffs <<<"$stats"))" \
  test "$(jq -r .ladder_swapoffs <<<"$stats")" -ge $((max_online - 1))
check "ladder_steps_online is 1 again" \
  test "$(jq -r .ladder_steps_online <<<"$stats")" -eq 1

# ---- a refused down: the steps stay, the daemon follows again ----
# 96 MiB in 32 MiB: about 64 MiB in swap, the first three or four steps,
# written at 8 MiB/s: the follower looks each second, a step is 16 MiB.
start_holder hold 32 96 8
wait_for '[[ $(online_steps) -ge 3 ]]' 10
held_online=$(online_steps)
diag "$(cat /proc/swaps)"
echo 1 >"$cg/memory.oom_control" || bail_out "cannot disable the memcg OOM killer"
"${cswap[@]}" --timeout 60 down >"$CLEANUP_DIR/refused.out" 2>&1
status=$?
diag "$(cat "$CLEANUP_DIR/refused.out")"
check "cswap down refuses while swapoff fails (exit $status, want 4)" \
  test "$status" -eq 4
check "after the refusal the $held_online steps online are online again ($(online_steps))" \
  test "$(online_steps)" -eq "$held_online"
check "and the daemon follows the swap in use again" \
  eval '"${ctl[@]}" ladder | grep -q "^following the swap in use: headroom 6M"'
check "the holder survived" kill -0 "$holder"
stop_holder
wait_for '[[ $(online_steps) -eq 1 ]]' 30
check "the holder gone, the extra steps went off again ($(online_steps) online)" \
  test "$(online_steps)" -eq 1

# ---- another process swaps a step off: the follower stands aside ----
# The ladder handed over again with a floor of 20M, above the first
# step, so that the follower keeps two steps online; then step 1 swapped
# off by hand, as systemd stops its swap units at shutdown beside
# cswap.service.  A follower that fought it swapped the step on again
# within a second (its idle look), and systemd failed to stop the unit.
read -ra windows <<<"$(state_get windows)"
"${ctl[@]}" ladder stop >/dev/null
for i in "${!devs[@]}"; do
  "${ctl[@]}" ladder add "${devs[$i]}" "${windows[$i]%:*}" "${windows[$i]#*:}" $((42 - i)) >/dev/null
done
"${ctl[@]}" ladder follow 6M 20M >/dev/null
wait_for '[[ -n $(used_kib "${devs[1]}") ]]' 10
check "with a floor of 20M the follower swapped step 1 on" test -n "$(used_kib "${devs[1]}")"
swapoff "${devs[1]}"
sleep 3                         # three of the follower's idle looks
check "step 1, swapped off by another process, stays off" test -z "$(used_kib "${devs[1]}")"
ladder_json=$("${ctl[@]}" --json ladder)
check "cswapctl ladder: the follower stood aside" \
  eval '[[ $(jq -r .stood_aside <<<"$ladder_json") == true && $(jq -r .following <<<"$ladder_json") == false ]]'
check "cswapctl ladder says why it no longer follows" \
  eval '"${ctl[@]}" ladder | grep -q "^not following: a step was swapped off by another process"'
check "the daemon's log names the step" \
  grep -q "ladder: ${devs[1]} was swapped off by another process" "$CSWAP_STATE_DIR/daemon.log"

"${cswap[@]}" --timeout 120 down >"$CLEANUP_DIR/down.out" 2>&1
status=$?
diag "$(cat "$CLEANUP_DIR/down.out")"
check "cswap down exits 0" test "$status" -eq 0
for d in "${devs[@]}"; do
  check "$d is no longer swap" test -z "$(used_kib "$d")"
done
check "no loop device over the FUSE file is left" \
  eval '[[ -z $(losetup -n -O NAME -j "$mnt/swap" 2>/dev/null) ]] && ! losetup -n -O BACK-FILE | grep -q "$mnt/swap"'
check "nothing is mounted on $mnt" eval '! mountpoint -q "$mnt"'
check "the daemon $pid is gone" eval '! kill -0 "$pid" 2>/dev/null'
check "the state is removed" test ! -e "$CSWAP_STATE_DIR/state"
tap_done
