#!/bin/bash
# cswap: the control socket of the nbdkit plugin, through cswapctl and raw
# sockets: every command after writing known pages over NBD, the socket's
# mode and SO_PEERCRED checks (as nobody), ctl-uid, a second daemon on the
# same path, a stale socket, bad and greedy clients (ctl-abuse.py) with the
# daemon still serving I/O and its memory flat, and the socket removed on
# a clean stop.
set -uo pipefail
source "$(dirname "$0")/../lib/plugin-env.sh"
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/stage-for-nobody.sh"

cswapctl=$CSWAP_BUILD_ROOT/control/cswapctl
here=$CSWAP_SOURCE_ROOT/tests/control
tmp=$(mktemp -d)
pids=()
cleanup () {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT


# start_daemon NAME ARGS...: nbdkit serving $tmp/NAME.nbd in the
# background; sets $pid once both sockets are up.
start_daemon () {
  local name=$1
  shift
  nbdkit -f -U "$tmp/$name.nbd" "$CSWAP_PLUGIN" size=64M "$@" \
    2> "$tmp/$name.log" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    [ -S "$tmp/$name.nbd" ] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

ctl () {                        # cswapctl on the first daemon's socket
  "$cswapctl" --socket "$tmp/ctl.sock" "$@"
}

ctl_as_nobody () {              # cswapctl as nobody, from its staged copy
  "${nobody[@]}" "$nobody_cswapctl" "$@"
}

json_field () {                 # json_field FIELD: from stats --json
  ctl --json stats | jq -e ".$1"
}

rss_kib () {
  awk '/^VmRSS/ { print $2 }' "/proc/$1/status"
}

start_daemon main ctl="$tmp/ctl.sock" codec=zstd ||
  { echo "Bail out! nbdkit did not start"; cat "$tmp/main.log"; exit 1; }
main_pid=$pid
check "the socket is made with mode 0600" \
  test "$(stat -c %a "$tmp/ctl.sock")" = 600
check "writing 256 pages over NBD" \
  /usr/bin/python3 "$here/nbd-pages.py" "$tmp/main.nbd" write

check "stats --json: 256 pages stored, 128 same-filled" \
  test "$(json_field pages_stored)/$(json_field same_filled_pages)" = 256/128
check "stats --json: writes counted, version and options" \
  test "$(ctl --json stats | jq -r '"\(.writes) \(.version) \(.options.codec) \(.options.size_bytes)"')" = \
       "256 0.1.0 zstd 67108864"
stats=$(ctl stats)
echo "$stats" | sed 's/^/# /'
check "stats: the device listing, memory first" \
  grep -q '^NAME *MEM-NOW .*ALGORITHM *DISKSIZE$' <<<"$stats"
check "stats: the device size as zramctl prints it" \
  grep -q 'zstd-1 *64M$' <<<"$stats"
check "stats --bytes: exact sizes" grep -q ' 67108864$' <<<"$(ctl --bytes stats)"
check "classes: one row per class" \
  test "$(ctl classes | wc -l)" -gt 10
check "classes --json: 12 fullness groups" \
  test "$(ctl --json classes | jq '.classes[0].zspages | length')" = 12
check "compact" grep -q PAGES-FREED <<<"$(ctl compact)"
check "get lists every setting" \
  test "$(ctl get | cut -d' ' -f1 | tr '\n' ' ')" = \
    "pool-limit codec level cold-codec cold-after accept-threshold writeback-batch idle-writeback writeback-limit writeback-burst "
check "set pool-limit then get" \
  test "$(ctl set pool-limit 16M && ctl get pool-limit)" = \
       "pool-limit 16777216
pool-limit 16777216"
check "set level 99: the daemon's error, exit 1" \
  exits 1 "cswapctl: daemon: level 99: zstd levels are" ctl set level 99
check "set bogus: exit 1" exits 1 "unknown key" ctl set bogus 1
check "writeback: no backing file yet, exit 1" \
  exits 1 "no backing file configured" ctl writeback
metrics=$(ctl metrics)
check "metrics: Prometheus text" \
  grep -q '^# TYPE cswap_writes_total counter$' <<<"$metrics"
check "metrics: writes counted" grep -q '^cswap_writes_total 256$' <<<"$metrics"
check "metrics: every sample is cswap_*" \
  test "$(grep -cv -e '^# ' -e '^cswap_[a-z0-9_]*\({[^}]*}\)\? [0-9.]*$' <<<"$metrics")" = 0
check "metrics: write requests timed" \
  awk '$1 == "cswap_write_requests_total" && $2 > 0 { found = 1 }
       $1 == "cswap_write_p50_us" && $2 > 0 { timed = 1 }
       END { exit !(found && timed) }' <<<"$metrics"
check "help" grep -q '^  writeback' <<<"$(ctl help)"
check "--watch repeats" \
  test "$(timeout 2.5 "$cswapctl" --socket "$tmp/ctl.sock" --watch 1 stats |
          grep -c ^NAME)" -ge 2
check "an unknown command is a usage error, exit 2" \
  exits 2 "unknown command" ctl frobnicate
check "a missing argument is a usage error, exit 2" \
  exits 2 "wrong number" ctl set level
check "no socket: exit 3" \
  exits 3 "no such socket: is the daemon running with ctl=" \
  "$cswapctl" --socket "$tmp/none.sock" stats

# As nobody: the socket file keeps it out; opened up, SO_PEERCRED does.
# (Staging cswapctl where nobody can run it makes $tmp 0711.)
stage_for_nobody nobody_cswapctl "$cswapctl"
check "nobody, socket 0600: access denied, exit 3" \
  exits 3 "access denied" ctl_as_nobody --socket "$tmp/ctl.sock" stats
chmod 0666 "$tmp/ctl.sock"
check "nobody, socket opened up: the daemon refuses by uid, exit 1" \
  exits 1 "access denied: uid 65534" \
  ctl_as_nobody --socket "$tmp/ctl.sock" stats

# ctl-uid: the daemon lets that user reach the socket by itself: the
# socket is the user's (still 0600), its directory, made by the daemon,
# can be passed through (0711).
uid_sock=$tmp/uid/uid.sock
start_daemon uid ctl="$uid_sock" ctl-uid="$(id -u nobody)" ||
  echo "# the ctl-uid daemon did not start"
uid_pid=$pid
check "ctl-uid=nobody: the socket is nobody's, mode 0600" \
  test "$(stat -c %U:%a "$uid_sock")" = nobody:600
check "ctl-uid=nobody: the directory the daemon made is 0711" \
  test "$(stat -c %a "$tmp/uid")" = 711
check "ctl-uid=nobody lets nobody in" \
  exits 0 "\"ok\":true" ctl_as_nobody --socket "$uid_sock" --json stats
check "a second daemon on a socket in use fails" \
  exits 1 "another daemon is listening" \
  nbdkit -U - "$CSWAP_PLUGIN" size=1M ctl="$tmp/ctl.sock" --run true
kill -KILL "$uid_pid"
wait "$uid_pid" 2>/dev/null
check "a daemon killed with SIGKILL leaves its socket" test -S "$uid_sock"
start_daemon stale ctl="$uid_sock" || echo "# the daemon did not start"
stale_pid=$pid
check "the next daemon replaces a stale socket" \
  exits 0 ALGORITHM "$cswapctl" --socket "$uid_sock" stats
check "a file that is not a socket is left alone" \
  exits 1 "exists and is not a socket" \
  nbdkit -U - "$CSWAP_PLUGIN" size=1M ctl="$tmp/main.log" --run true
check "ctl=none: no socket" \
  nbdkit -U - "$CSWAP_PLUGIN" size=1M ctl=none --run true

# Bad clients, and the daemon afterwards.
rss_before=$(rss_kib "$main_pid")
while read -r result; do
  n=$((n + 1))
  echo "${result/ - / $n - }"
  [[ $result == ok* ]] || status=1
done < <(/usr/bin/python3 "$here/ctl-abuse.py" "$tmp/ctl.sock")
rss_after=$(rss_kib "$main_pid")
echo "# nbdkit RSS: $rss_before KiB before the bad clients, $rss_after after"
check "the daemon's RSS grew by less than 4 MiB" \
  test $((rss_after - rss_before)) -lt 4096
check "the data reads back over NBD" \
  /usr/bin/python3 "$here/nbd-pages.py" "$tmp/main.nbd" check

kill -TERM "$stale_pid" "$main_pid"
wait "$stale_pid" "$main_pid"
check "a clean stop removes the socket" test ! -e "$tmp/ctl.sock"
check "and the one it took over" test ! -e "$uid_sock"
done_testing
