# shellcheck shell=bash
# cswap: helpers shared by the memory-pressure tests (tests/pressure).
# Source it after tests/swap/swap-lib.sh.
# shellcheck disable=SC2034,SC2154  # sets and reads the tests' globals

# A process's /proc/PID/status field in kB (VmSwap, VmRSS, VmLck), or
# nothing if the process is gone.
proc_status_kb ()
{
  awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status" 2>/dev/null
}

# start_ctl_sampler FILE PERIOD [COMMAND]…: in the background, every
# PERIOD seconds, sends each COMMAND (e.g. "compact", "writeback max=256")
# then "stats" through cswapctl, each bounded by 10 s, and appends one line
#   OK|FAIL RSS_BYTES LOCKED_BYTES VMSWAP_KB WRITTEN_BACK_PAGES
# to FILE (stats is tried three times, 0.2 s apart: past its 64 clients
# the daemon refuses a connection, by design; VmSwap read from /proc/$daemon_pid/status).  Sets sampler_pid;
# registers its stop.  Needs cswapctl and daemon_pid (start_front_end).
start_ctl_sampler ()
{
  local file=$1 period=$2; shift 2
  (
    if [[ -n ${SWAP_LOCK_FD:-} ]]; then exec {SWAP_LOCK_FD}>&-; fi
    trap - EXIT
    trap 'exit 0' TERM
    local cmd json swap ok
    while kill -0 "$daemon_pid" 2>/dev/null; do
      for cmd in "$@"; do
        # shellcheck disable=SC2086  # a command and its arguments
        timeout 10 "${cswapctl[@]}" $cmd >/dev/null 2>&1
      done
      swap=$(proc_status_kb "$daemon_pid" VmSwap)
      ok=
      for _ in 1 2 3; do
        if json=$(timeout 10 "${cswapctl[@]}" stats 2>/dev/null) \
           && jq -e .process_rss_bytes >/dev/null 2>&1 <<<"$json"; then
          ok=1; break
        fi
        sleep 0.2
      done
      if [[ -n $ok ]]; then
        echo "OK $(jq -r '"\(.process_rss_bytes) \(.process_locked_bytes) '"${swap:-0}"' \(.written_back_pages)"' <<<"$json")"
      else
        echo "FAIL 0 0 ${swap:-0} 0"
      fi >>"$file"
      sleep "$period"
    done
  ) &
  sampler_pid=$!
  cleanup_push stop_sampler "$sampler_pid"
}

stop_sampler ()
{
  kill -TERM "$1" 2>/dev/null
  wait_pid_gone "$1" 15 || kill -KILL "$1" 2>/dev/null
  return 0
}

# sampler_summary FILE: sets samples, samples_failed, rss_max, locked_min,
# vmswap_max_kb from the sampler's FILE.
sampler_summary ()
{
  read -r samples samples_failed rss_max locked_min vmswap_max_kb < <(awk '
    { n++ }
    $1 != "OK" { failed++ }
    $1 == "OK" { if ($2 > rss) rss = $2; if (lck == "" || $3 < lck) lck = $3 }
    { if ($4 > swap) swap = $4 }
    END { printf "%d %d %.0f %.0f %.0f\n", n, failed, rss, lck, swap }' "$1")
}

# stat_now FIELD: one field of the daemon's stats, now (bounded by 10 s).
stat_now ()
{
  timeout 10 "${cswapctl[@]}" stats 2>/dev/null | jq -er --arg k "$1" '.[$k]'
}

mib ()
{
  echo $(($1 >> 20))
}
