#!/bin/bash
# cswap: cswap-fuse serves the same control socket as the nbdkit plugin
# (both call control_server_open/start/stop): stats count what was written
# through the mounted file, get/set work, the socket is refused to nobody,
# and a clean stop removes it.  The full protocol is test-ctl-nbd.sh's.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/fuse-daemon.sh"
source "$(dirname "$0")/../lib/stage-for-nobody.sh"

mnt=$tmp/mnt-ctl
sock=$tmp/ctl.sock
ctl () {
  "$cswapctl" --socket "$sock" "$@"
}

start_fuse ctl --size 64M
check "the socket is made with mode 0600" test "$(stat -c %a "$sock")" = 600
# 64 pages of text, 64 same-filled, through the page cache-less file.
check "writing 128 pages through the file" \
  dd if=<(yes "cswap fuse control" | head -c $((64 * 4096))
          tr '\0' '\1' </dev/zero | head -c $((64 * 4096))) \
     of="$mnt/swap" bs=4096 count=128 iflag=fullblock oflag=direct \
     conv=notrunc status=none
check "stats --json: 128 pages stored, 64 same-filled" \
  test "$(ctl --json stats | jq -r '"\(.pages_stored) \(.same_filled_pages)"')" = \
       "128 64"
check "stats: the listing" grep -q ' 64M$' <<<"$(ctl stats)"
# The daemon's peak memory: at least what it holds now, and read from
# this daemon's own /proc (VmHWM of its status), not left at 0.
daemon_peak_reported () {
  local peak rss hwm
  read -r peak rss <<<"$(ctl --json stats | jq -r '"\(.process_peak_bytes) \(.process_rss_bytes)"')"
  hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$pid/status")
  echo "# process_peak_bytes $peak, process_rss_bytes $rss, VmHWM now $hwm"
  [[ $peak -gt 0 && $peak -ge $rss && $peak -le $hwm ]]
}
check "stats: process_peak_bytes is the daemon's VmHWM" daemon_peak_reported
check "set codec lz4, get codec" \
  test "$(ctl set codec lz4 >/dev/null && ctl get codec)" = "codec lz4"
other_commands_answer () {
  ctl classes >/dev/null && ctl compact >/dev/null &&
    grep -q "^cswap_pages_stored 128$" <<<"$(ctl metrics)"
}

refused_for_nobody () {
  local message code
  message=$("${nobody[@]}" "$nobody_cswapctl" --socket "$sock" stats 2>&1)
  code=$?
  echo "# $message"
  [ "$code" -eq 1 ] && grep -q "access denied: uid" <<<"$message"
}

check "classes, compact and metrics answer" other_commands_answer
# Open to all at the file system level, so that only SO_PEERCRED refuses
# (staging cswapctl where nobody can run it makes $tmp 0711).
stage_for_nobody nobody_cswapctl "$cswapctl"
chmod 0666 "$sock"
check "nobody is refused by uid" refused_for_nobody
kill -TERM "$pid"
wait "$pid"
check "cswap-fuse stops cleanly on SIGTERM" test $? -eq 0
check "and removes its socket" test ! -e "$sock"
done_testing
