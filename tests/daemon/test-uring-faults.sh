#!/bin/bash
# cswap: FUSE over io_uring under injected faults (cswap-fuse-faults, the
# test build; daemon/serve/uring-fault.h).  A queue must neither shrink nor
# hang quietly:
#   commit-einval:5    the kernel refuses 5% of the replies (EINVAL, the
#                      request still waiting): each is sent again, and
#                      fuse-io's random I/O all completes and checks out;
#                      the daemon then stops on SIGTERM with exit 0
#   commit-einval:100  every reply refused: the daemon gives up loudly,
#                      exit 1 within 30 s, not a hang or a quiet exit 0
#   submit-error:100   io_uring_submit_and_wait always fails: the same
# enable_uring is turned on for the run and put back at exit.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/enable-uring.sh"

[ "$(id -u)" -eq 0 ] || skip "mounting the device file needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse-faults
fuse_io=$CSWAP_BUILD_ROOT/tests/daemon/fuse-io

mnt=$(mktemp -d)
log=$(mktemp)
out=$(mktemp)
pid=
# shellcheck disable=SC2317  # runs from the EXIT trap
cleanup () {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  grep -qs " $mnt fuse" /proc/mounts && fusermount3 -u -z "$mnt"
  rmdir "$mnt"
  rm -f "$log" "$out"
  enable_uring_restore
}
trap cleanup EXIT
enable_uring_set Y || skip "cannot turn FUSE over io_uring on ($ENABLE_URING_PARAM)"

mounted () {
  grep -qs " $mnt fuse.cswap " /proc/mounts
}

# start FAULTS [may-exit]: the daemon on io_uring with
# CSWAP_FUSE_URING_FAULT=FAULTS; with may-exit, its failing before the
# test sees it serve is no set-up failure.
start () {
  CSWAP_FUSE_URING_FAULT=$1 "$cswap_fuse" -f --size 64M -o ctl=none \
    --transport uring "$mnt" 2>"$log" &
  pid=$!
  for _ in $(seq 100); do
    mounted && grep -q "transport: io_uring" "$log" && return 0
    sleep 0.1
    kill -0 "$pid" 2>/dev/null && continue
    [ "${2:-}" = may-exit ] && return 0
    break
  done
  echo "Bail out! cswap-fuse did not mount"
  cat "$log" >&2
  exit 1
}

# Waits up to 30 s for the daemon to exit; sets exit_status (124: still
# running, killed).
wait_exit () {
  if ! timeout 30 tail --pid="$pid" -f /dev/null; then
    kill -KILL "$pid"
  fi
  wait "$pid"
  exit_status=$?
  [ -d "/proc/$pid" ] || pid=
}

show_log () {
  grep -v '^cswap: \(stats\|latency\)' "$log" | sed 's/^/# /'
}

# Retried replies: fuse-io's own checks, renumbered into this test's.
start commit-einval:5
timeout 120 "$fuse_io" "$mnt/swap" 4 3000 >"$out"
io_status=$?
tap_include "$out"
check "commit-einval:5: fuse-io exits 0 ($io_status)" test "$io_status" -eq 0
check "and the daemon still serves" mounted
kill -TERM "$pid"
wait_exit
show_log
check "and stops on SIGTERM with exit 0 ($exit_status)" test "$exit_status" -eq 0
check "having said how many replies it sent again" \
  grep -qE "io_uring queue [0-9]+: [1-9][0-9]* commands? sent again" "$log"

for fault in commit-einval:100 submit-error:100; do
  start "$fault" may-exit
  # Requests to every queue: from each CPU in turn.
  for cpu in $(seq 0 $(($(nproc) - 1))); do
    timeout 10 taskset -c "$cpu" dd if="$mnt/swap" of=/dev/null bs=4k count=1 \
      iflag=direct status=none 2>/dev/null &
  done
  wait_exit
  wait
  show_log
  check "$fault: the daemon exits 1 rather than hang or end quietly ($exit_status)" \
    test "$exit_status" -eq 1
  check "and says which queue failed" grep -qE "io_uring queue [0-9]+ cannot serve .*: stopping the daemon" "$log"
  check "and leaves nothing mounted" eval '! mounted'
done

done_testing
