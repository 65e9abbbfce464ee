# cswap: sourced, after tap.sh, by tests that run cswap-fuse daemons
# without swap: skips where that cannot work, makes $tmp, and starts
# daemons that the EXIT trap stops and unmounts before removing $tmp.
# Sets cswap_fuse and cswapctl, the programs under test.
# shellcheck shell=bash

[ "$(id -u)" -eq 0 ] || skip "mounting the device file needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
command -v jq >/dev/null || skip "jq is not installed"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
# shellcheck disable=SC2034  # the sourcing test runs it
cswapctl=$CSWAP_BUILD_ROOT/control/cswapctl

tmp=$(mktemp -d)
fuse_pids=()
stop_fuse_daemons () {
  local pid mnt
  for pid in "${fuse_pids[@]}"; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  for mnt in "$tmp"/mnt-*; do
    grep -qs " $mnt fuse" /proc/mounts && fusermount3 -u -z "$mnt"
  done
  rm -rf "$tmp"
}
trap stop_fuse_daemons EXIT

# await_daemon PROGRAM NAME COMMAND...: waits until COMMAND succeeds and
# the daemon started as NAME answers `stats` on $tmp/NAME.sock; bails out
# of the test with its log ($tmp/NAME.log) if that takes over 10 s.
# Started means answering: the socket is bound (and cswap-fuse's file
# mounted) before the daemon has locked its memory and started its
# threads, and a test that looked then saw a daemon not yet set up.
await_daemon () {
  local program=$1 name=$2
  shift 2
  for _ in $(seq 100); do
    "$@" && [ -S "$tmp/$name.sock" ] &&
      timeout 10 "$cswapctl" --socket "$tmp/$name.sock" stats >/dev/null &&
      return 0
    sleep 0.1
  done
  echo "Bail out! $program $name did not start"
  cat "$tmp/$name.log" >&2
  exit 1
}

# start_fuse NAME ARGS...: cswap-fuse -f ARGS in the background, serving
# $tmp/mnt-NAME/swap, with the socket $tmp/NAME.sock and the log
# $tmp/NAME.log; sets pid.  Bails out of the test if it does not start.
start_fuse () {
  local name=$1 mnt=$tmp/mnt-$1
  shift
  mkdir "$mnt"
  "$cswap_fuse" -f "$@" -o ctl="$tmp/$name.sock" "$mnt" \
    2>"$tmp/$name.log" &
  pid=$!
  fuse_pids+=("$pid")
  await_daemon cswap-fuse "$name" grep -qs " $mnt fuse.cswap " /proc/mounts
}
