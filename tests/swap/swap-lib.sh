# shellcheck shell=bash
# cswap: a bash library for end-to-end swap tests.  Source it; do not run it.
#
# Style: the library speaks TAP, like tests/lib/tap.h.
#   - Checks are TAP lines: tap_ok COND_STATUS DESCRIPTION prints
#     "ok N - …" or "not ok N - …"; run_swap_workload emits its own.  A test
#     ends with `tap_done`, which prints the plan "1..N" and exits 0 if every
#     check passed, 1 otherwise.  Register the test in meson with
#     protocol : 'tap'.
#   - A missing prerequisite (not root, no tool, no device) is a skip:
#     skip_all REASON prints "1..0 # SKIP REASON" and exits 0 (as tap.sh).
#   - A set-up failure after which no check would mean anything is
#     bail_out REASON: "Bail out! REASON", exit 1.
#   - TAP goes to file descriptor $TAP_FD (default 1) as it was when the
#     library was sourced, even from inside $(…).  A script whose stdout is
#     JSON for benchmarks (zram-anchor.sh) sets TAP_FD=2 before sourcing.
#   - Functions that print a result (attach_loop, make_memcg) are called in
#     $(…), where skip_all and bail_out only end the subshell: propagate
#     with `dev=$(attach_loop "$file") || exit`.
#   - Safe under `set -e`, `set -u` and pipefail or without them; the
#     library itself sets none of them.
#
# Teardown: every function that creates something (a loop device, a swap, a
# cgroup) registers its undoing with cleanup_push, and one EXIT trap runs
# the stack in reverse order, whatever way the script ends (cleanup_run_now
# runs it early, for checks that need the teardown done).  stop_daemon and
# fuse_unmount are the undo steps for daemons and FUSE mounts.  The stack is
# a file, not a variable, so functions called in $(…) — attach_loop prints
# the device it made — can register too.  Create things in the order
# device → swap_on → memcg (run_swap_workload makes its memcg itself): the
# reverse order then kills the workload before swapoff, which otherwise
# would have to read every swapped page back in, inside the memcg's limit.
#
# Concurrency: meson runs tests in parallel, and two swap tests at once
# would swap to each other's devices and read each other's pswpout.
# swap_on takes an exclusive lock (SWAP_LOCK_FILE) held until the script
# exits, so call it in the main shell, not in $(…).  Swaps that are not
# ours are never turned off: if one is active, the test skips.
#
# Needs bash ≥ 4.1 (for {fd} redirections).

# Kept in variables so a benchmark can point elsewhere.
: "${SWAP_LOCK_FILE:=/run/lock/cswap-swap-test.lock}"
: "${SWAP_LOCK_WAIT_S:=900}"
: "${TAP_FD:=1}"
# A copy of the TAP descriptor that $(…) does not capture.
exec {TAP_OUT}>&"$TAP_FD"
if [[ -z ${SWAP_WORKLOAD:-} ]]; then
  SWAP_WORKLOAD=${CSWAP_BUILD_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}/tests/swap/swap-workload
fi
MEMCG_ROOT=/sys/fs/cgroup/memory

# ---------------------------------------------------------------- TAP ----

tap_count=0
tap_failed=0

tap_ok ()
{
  local status=$1; shift
  tap_count=$((tap_count + 1))
  if [[ $status -eq 0 ]]; then
    echo "ok $tap_count - $*" >&"$TAP_OUT"
  else
    tap_failed=$((tap_failed + 1))
    echo "not ok $tap_count - $*" >&"$TAP_OUT"
  fi
  return "$status"
}

# check DESCRIPTION CMD [ARG]…: one TAP line for whether CMD succeeds.
check ()
{
  local desc=$1; shift
  if "$@"; then
    tap_ok 0 "$desc"
  else
    tap_ok 1 "$desc"
  fi
}

# diag TEXT: TEXT as TAP comments, every line of it prefixed, so that a
# multi-line TEXT (a copy of /proc/swaps, say) cannot break the TAP stream.
diag ()
{
  local line
  while IFS= read -r line; do
    echo "# $line" >&"$TAP_OUT"
  done <<<"$*"
}

tap_done ()
{
  echo "1..$tap_count" >&"$TAP_OUT"
  [[ $tap_failed -eq 0 ]] && exit 0
  exit 1
}

skip_all ()
{
  echo "1..0 # SKIP $*" >&"$TAP_OUT"
  exit 0                        # as tap.sh: meson takes 77 for an error
}

bail_out ()
{
  echo "Bail out! $*" >&"$TAP_OUT"
  exit 1
}

# ------------------------------------------------------- requirements ----

require_root ()
{
  [[ $(id -u) -eq 0 ]] || skip_all "needs root (swapon, losetup, cgroups)"
}

require_cmd ()
{
  local cmd missing=()
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
  done
  [[ ${#missing[@]} -eq 0 ]] || skip_all "missing command(s): ${missing[*]}"
}

# ----------------------------------------------------------- teardown ----

CLEANUP_DIR=$(mktemp -d /tmp/cswap-swap-test.XXXXXX) || bail_out "mktemp failed"
CLEANUP_STACK=$CLEANUP_DIR/cleanup-stack

# cleanup_push CMD [ARG]…: CMD ARG… runs at exit, before everything pushed
# earlier.  Arguments are quoted here, so they may contain spaces.
cleanup_push ()
{
  printf '%q ' "$@" >>"$CLEANUP_STACK"
  echo >>"$CLEANUP_STACK"
}

# Runs the stack now, newest first, and empties it: for a test that must
# check something after teardown (e.g. a daemon's exit statistics).
cleanup_run_now ()
{
  local cmd
  [[ -s $CLEANUP_STACK ]] || return 0
  # A failing step is reported and the next one runs all the same: a
  # swapoff that fails must not leave the loop device and daemon behind.
  while IFS= read -r cmd; do
    # Its output is for the log, not the TAP stream on stdout.
    eval "$cmd" >&2 || echo "cleanup: failed: $cmd" >&2
  done < <(tac "$CLEANUP_STACK")
  : >"$CLEANUP_STACK"
}

run_cleanups ()
{
  local status=$?
  trap - EXIT INT TERM HUP
  cleanup_run_now
  rm -rf "$CLEANUP_DIR"
  exit "$status"
}
trap run_cleanups EXIT
# A signal becomes an exit, so the EXIT trap runs the stack.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ------------------------------------------------------------ helpers ----

vmstat_get ()
{
  awk -v key="$1" '$1 == key { print $2; found = 1 } END { exit !found }' /proc/vmstat
}

# wait_for COND_CMD TIMEOUT_S: polls the shell command COND_CMD every 0.1 s;
# returns 0 as soon as it succeeds, 1 after TIMEOUT_S seconds.
wait_for ()
{
  local cond=$1 deadline=$((SECONDS + $2))
  until eval "$cond"; do
    [[ $SECONDS -lt $deadline ]] || return 1
    sleep 0.1
  done
}

# Waits up to TIMEOUT_S for PID to be gone.
wait_pid_gone ()
{
  wait_for "! kill -0 $1 2>/dev/null" "$2"
}

# stop_daemon PID: SIGTERM, then SIGKILL after 10 s.  A daemon that does not
# stop on SIGTERM is reported, since stopping cleanly is part of its job.
stop_daemon ()
{
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || return 0
  wait_pid_gone "$pid" 10 && return 0
  echo "cleanup: pid $pid ignored SIGTERM for 10s, killing it" >&2
  kill -KILL "$pid" 2>/dev/null
  wait_pid_gone "$pid" 5
}

# fuse_unmount MOUNTPOINT [PID]: unmounts a FUSE file system, lazily if it
# is still busy, then waits for its daemon PID to exit (killing it late).
fuse_unmount ()
{
  local mnt=$1 pid=${2:-}
  if mountpoint -q "$mnt"; then
    fusermount3 -u "$mnt" 2>/dev/null || { sleep 1; fusermount3 -u "$mnt"; } \
      || fusermount3 -uz "$mnt" || return 1
  fi
  [[ -z $pid ]] || stop_daemon "$pid"
}

# --------------------------------------------------------- memory cgroup ----

# Kills what is left in a cgroup, then removes it: rmdir fails while a
# process is in it.  (cgroupfs files report size 0, so read, do not test -s.)
memcg_remove ()
{
  local cg=$1 pids
  [[ -d $cg ]] || return 0
  for _ in $(seq 50); do
    mapfile -t pids <"$cg/cgroup.procs"
    [[ ${#pids[@]} -gt 0 ]] || break
    kill -KILL "${pids[@]}" 2>/dev/null
    sleep 0.1
  done
  rmdir "$cg"
}

# make_memcg NAME LIMIT_BYTES: prints the path of a new cgroup v1 memory
# group with that limit.  Swappiness 60 is the kernel's default, set
# explicitly so a tuned parent cannot turn swap off for the test.
make_memcg ()
{
  local name=$1 limit=$2 cg
  [[ -d $MEMCG_ROOT ]] || skip_all "no cgroup v1 memory controller at $MEMCG_ROOT"
  cg=$MEMCG_ROOT/cswap-test-$$-$name
  mkdir "$cg" || bail_out "mkdir $cg failed"
  cleanup_push memcg_remove "$cg"
  echo "$limit" >"$cg/memory.limit_in_bytes" || bail_out "cannot set $cg limit"
  echo 60 >"$cg/memory.swappiness" || bail_out "cannot set $cg swappiness"
  echo "$cg"
}

# run_in_memcg CG CMD [ARG]…: runs CMD with its pid in CG from its first
# instruction.  (swap-workload has --cgroup instead, to join only after
# loading its dictionary.)
run_in_memcg ()
{
  local cg=$1; shift
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# start_holder NAME LIMIT_MIB SIZE_MIB [MIB_PER_S]: a Python workload in a
# new memcg NAME of LIMIT_MIB that writes SIZE_MIB, a stamp a page, and
# sleeps, with what does not fit swapped out; returns once it is written.
# MIB_PER_S (default: as fast as it can) paces the writing for a ladder
# that follows: the follower swaps the next step on at its next look, and
# a burst that fills the steps online before then meets a full swap, and
# the memcg's OOM killer.  Sets cg (the memcg: a test may turn its OOM
# killer off to make swapoff fail) and holder (its pid).  stop_holder
# kills it and removes the memcg.
start_holder ()
{
  rm -f "$CLEANUP_DIR/ready"
  cg=$(make_memcg "$1" $(($2 << 20))) || exit
  python3 - "$cg" "$CLEANUP_DIR/ready" "$3" "${4:-0}" <<'PY' &
import os, sys, time
with open(sys.argv[1] + "/cgroup.procs", "w") as f:
    f.write(str(os.getpid()))
data = bytearray(int(sys.argv[3]) << 20)
mib_per_s = int(sys.argv[4])
for i in range(0, len(data), 4096):
    data[i:i + 8] = i.to_bytes(8, "little")
    if mib_per_s and (i + 4096) % (1 << 20) == 0:
        time.sleep(1 / mib_per_s)
open(sys.argv[2], "w").close()
time.sleep(3600)
PY
  holder=$!
  wait_for "[[ -e $CLEANUP_DIR/ready ]]" 120 || bail_out "the memcg workload did not fill"
}

stop_holder ()
{
  memcg_remove "$cg"
  wait "$holder" 2>/dev/null
}

# ------------------------------------------------------ devices and swap ----

# attach_loop FILE: prints /dev/loopN backed by FILE with direct I/O.  A
# buffered loop would keep an uncompressed copy of every swapped page in
# FILE's page cache (DESIGN.md, "The transport sets the speed"), so a loop
# that silently fell back to buffered I/O is a set-up failure.
attach_loop ()
{
  local file=$1 dev dio
  dev=$(losetup --direct-io=on --show -f "$file") || bail_out "losetup $file failed"
  cleanup_push losetup -d "$dev"
  dio=$(cat "/sys/block/${dev#/dev/}/loop/dio" 2>/dev/null)
  [[ $dio == 1 ]] || bail_out "$dev: direct I/O is off (backing file on a filesystem without O_DIRECT?)"
  echo "$dev"
}

# The devices swap_on turned on (a ladder has several).
SWAPPED_ON=()

# Active swaps other than DEV and those of SWAPPED_ON, one per line.
other_swaps ()
{
  local dev=$1 real
  real=$(readlink -f "$dev")
  awk -v a="$dev" -v b="$real" -v ours=" ${SWAPPED_ON[*]} " \
    'NR > 1 && $1 != a && $1 != b && !index(ours, " " $1 " ") { print $1 }' /proc/swaps
}

# Serialises swap tests machine-wide (see Concurrency above).
swap_lock ()
{
  [[ -n ${SWAP_LOCK_FD:-} ]] && return 0
  exec {SWAP_LOCK_FD}>>"$SWAP_LOCK_FILE" || bail_out "cannot open $SWAP_LOCK_FILE"
  flock -w "$SWAP_LOCK_WAIT_S" "$SWAP_LOCK_FD" \
    || skip_all "another swap test held $SWAP_LOCK_FILE for ${SWAP_LOCK_WAIT_S}s"
}

# Bounded: swapoff reads every swapped page back, and a hung device must
# not hang the test forever.  Retried, since it fails (ENOMEM) while a
# process that owns swapped pages is still dying.
swap_off ()
{
  local try
  for try in 1 2 3; do
    timeout 300 swapoff "$1" && return 0
    [[ $try -lt 3 ]] && sleep 1
  done
  return 1
}

# swap_on DEV [PRIO]: mkswap + swapon with discard, so that freed swap slots
# reach the device as trims (the only way a block device learns a slot is
# free).  Skips if any other swap is active: measurements would be split.
swap_on ()
{
  local dev=$1 prio=${2:-100} others
  swap_lock
  if grep -q "^$(readlink -f "$dev") " /proc/swaps; then
    bail_out "$dev is already a swap device: not ours, not touching it"
  fi
  others=$(other_swaps "$dev")
  [[ -z $others ]] || skip_all "other swap devices are active: $(echo "$others" | tr '\n' ' ')"
  mkswap "$dev" >/dev/null || bail_out "mkswap $dev failed"
  swapon --discard=pages -p "$prio" "$dev" || bail_out "swapon $dev failed"
  cleanup_push swap_off "$dev"
  SWAPPED_ON+=("$dev")
}

# ---------------------------------------------------------- front ends ----

# start_front_end nbdkit|fuse WORKDIR [DEVICE-OPTION=VALUE]…
#
# Starts a cswap device under WORKDIR (created) through one front end:
#   nbdkit  nbdkit + the cswap plugin -> nbdfuse, the file WORKDIR/mnt/swap
#   fuse    cswap-fuse, the file WORKDIR/mnt/swap
# with size=1G (unless given) and ctl=WORKDIR/ctl.sock added to the options,
# and registers their teardown.  Sets device_file (attach a loop to it),
# daemon_pid (the process holding the store: nbdkit or cswap-fuse),
# daemon_log, ctl_sock and the array cswapctl (the client, with --socket and
# --json).  Environment: DAEMON_ENV (an array of NAME=VALUE for the
# daemon's environment only, e.g. CSWAP_TIER_FAULT=eio:30, which only
# cswap-fuse-faults reads), DAEMON_FUSE (the fuse front end's program,
# default the build's cswap-fuse) and DAEMON_MEMCG (a memory cgroup the
# daemon runs in from its first instruction).
# Needs CSWAP_BUILD_ROOT.  Skips without the tools, bails out if the daemon
# does not come up within 20 s.
# shellcheck disable=SC2034  # the variables it sets are for the caller
start_front_end ()
{
  local front_end=$1 work=$2; shift 2
  local options=() option fuse_args=() env_cmd=(env) size_given=
  local build=${CSWAP_BUILD_ROOT:?run through meson test}

  require_cmd fusermount3
  [[ -e /dev/fuse ]] || skip_all "no /dev/fuse"
  for option in "$@"; do [[ $option == size=* ]] && size_given=1; done
  [[ -n $size_given ]] || options+=(size=1G)
  ctl_sock=$work/ctl.sock
  options+=("ctl=$ctl_sock" "$@")
  cswapctl=("$build/control/cswapctl" --socket "$ctl_sock" --json)
  daemon_log=$work/daemon.log
  device_file=$work/mnt/swap
  mkdir -p "$work/mnt" || bail_out "mkdir $work/mnt failed"
  if [[ -n ${DAEMON_ENV+x} ]]; then env_cmd+=("${DAEMON_ENV[@]}"); fi
  # Not run_in_memcg: a function in the background would be a subshell,
  # and $! its pid instead of the daemon's.  sh execs env execs the daemon.
  if [[ -n ${DAEMON_MEMCG:-} ]]; then
    # shellcheck disable=SC2016  # $$ and $0 are for sh
    env_cmd=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$DAEMON_MEMCG" "${env_cmd[@]}")
  fi

  case $front_end in
    nbdkit)
      require_cmd nbdkit nbdfuse
      "${env_cmd[@]}" nbdkit --foreground --exit-with-parent --tls=off --unix "$work/sock" \
        --pidfile "$work/nbdkit.pid" \
        "$build/daemon/nbdkit-cswap-plugin.so" "${options[@]}" 2>"$daemon_log" &
      daemon_pid=$!
      cleanup_push stop_daemon "$daemon_pid"
      wait_for "[[ -s $work/nbdkit.pid ]]" 20 \
        || bail_out "nbdkit did not start: $(cat "$daemon_log")"
      nbdfuse -P "$work/nbdfuse.pid" "$work/mnt/swap" --unix "$work/sock" &
      nbdfuse_pid=$!
      cleanup_push fuse_unmount "$work/mnt" "$nbdfuse_pid"
      wait_for "[[ -s $work/nbdfuse.pid ]]" 20 || bail_out "nbdfuse did not mount"
      ;;
    fuse)
      for option in "${options[@]}"; do fuse_args+=(-o "$option"); done
      "${env_cmd[@]}" "${DAEMON_FUSE:-$build/daemon/cswap-fuse}" -f "${fuse_args[@]}" "$work/mnt" \
        2>"$daemon_log" &
      daemon_pid=$!
      cleanup_push fuse_unmount "$work/mnt" "$daemon_pid"
      wait_for "[[ -e $work/mnt/swap ]]" 20 \
        || bail_out "cswap-fuse did not mount: $(cat "$daemon_log")"
      ;;
    *)
      bail_out "unknown front end $front_end"
      ;;
  esac
}

# --------------------------------------------------------- the workload ----

# json_get JSON KEY: a number field of a one-line JSON object.
json_get ()
{
  jq -er --arg k "$2" '.[$k]' <<<"$1"
}

# run_swap_workload DEV_DESC CG_LIMIT_MIB WORKLOAD_MIB SECONDS [ARG]…
#
# Runs swap-workload (extra ARGs are passed to it) in a new memcg of
# CG_LIMIT_MIB, and emits three TAP checks named after DEV_DESC:
#   - the workload exited 0 with zero mismatches;
#   - pswpout grew by at least SWAP_MIN_SWAPOUT_MIB (default
#     WORKLOAD_MIB - CG_LIMIT_MIB: what must have left RAM for the workload
#     to fit in its limit at all);
#   - pswpin grew (pages came back).
# pswpin/pswpout are machine-wide; the swap lock keeps other swap tests out.
# Sets SWAP_WORKLOAD_JSON (the workload's JSON line), SWAP_PSWPOUT_DELTA and
# SWAP_PSWPIN_DELTA (pages).  With SWAP_SNAPSHOT_CMD set, passes it as
# --snapshot-cmd.  Bounded by SWAP_WORKLOAD_TIMEOUT_S (default SECONDS+300:
# filling and the final pass move every swapped page through the device).
# Returns 0 if all three checks passed.
run_swap_workload ()
{
  local desc=$1 limit_mib=$2 size_mib=$3 seconds=$4; shift 4
  local min_out_mib=${SWAP_MIN_SWAPOUT_MIB:-$((size_mib - limit_mib))}
  local budget=${SWAP_WORKLOAD_TIMEOUT_S:-$((seconds + 300))}
  local cg out=$CLEANUP_DIR/workload.json in0 out0 status mismatches all_ok=0
  local args=(--size "$size_mib" --seconds "$seconds")

  require_cmd jq timeout
  [[ -x $SWAP_WORKLOAD ]] || skip_all "$SWAP_WORKLOAD not built (ninja -C build)"
  cg=$(make_memcg workload $((limit_mib << 20))) || exit
  args+=(--cgroup "$cg")
  if [[ -n ${SWAP_SNAPSHOT_CMD:-} ]]; then
    args+=(--snapshot-cmd "$SWAP_SNAPSHOT_CMD")
  fi

  if ! in0=$(vmstat_get pswpin) || ! out0=$(vmstat_get pswpout); then
    bail_out "no pswpin/pswpout in /proc/vmstat"
  fi
  diag "$desc: swap-workload ${args[*]}${*:+ $*} (memcg limit ${limit_mib} MiB, timeout ${budget}s)"
  # In the background and waited for, so that a signal runs the EXIT trap
  # at once instead of after the workload.  The swap lock stays with us.
  (
    if [[ -n ${SWAP_LOCK_FD:-} ]]; then exec {SWAP_LOCK_FD}>&-; fi
    exec timeout "$budget" "$SWAP_WORKLOAD" "${args[@]}" "$@" >"$out"
  ) &
  wait $! && status=0 || status=$?
  SWAP_PSWPIN_DELTA=$(($(vmstat_get pswpin) - in0))
  SWAP_PSWPOUT_DELTA=$(($(vmstat_get pswpout) - out0))
  SWAP_WORKLOAD_JSON=$(tail -n 1 "$out")
  mismatches=$(json_get "$SWAP_WORKLOAD_JSON" mismatches 2>/dev/null) || mismatches=unknown

  if [[ $status -eq 124 ]]; then
    diag "$desc: swap-workload timed out after ${budget}s"
  fi
  check "$desc: workload exit status $status, $mismatches mismatches" \
    test "$status" -eq 0 -a "$mismatches" = 0 || all_ok=1
  check "$desc: pswpout grew by $SWAP_PSWPOUT_DELTA pages (≥ $min_out_mib MiB wanted)" \
    test $((SWAP_PSWPOUT_DELTA * 4096)) -ge $((min_out_mib << 20)) || all_ok=1
  check "$desc: pswpin grew by $SWAP_PSWPIN_DELTA pages" \
    test "$SWAP_PSWPIN_DELTA" -gt 0 || all_ok=1
  diag "$desc: $SWAP_WORKLOAD_JSON"
  return "$all_ok"
}
