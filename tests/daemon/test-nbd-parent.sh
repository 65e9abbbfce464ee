#!/bin/bash
# cswap: `nbdkit --foreground cswap …` keeps serving after the shell that
# started it exits, as it must under `cswap up`: nbdkit 1.32 arms
# PR_SET_PDEATHSIG whether or not --exit-with-parent was given
# (daemon/nbdkit/parent-death.c), and a swap server that dies with its shell
# loses every page swapped to it.  --exit-with-parent, in full and in the
# shortest prefix getopt_long takes, still makes it exit with its parent.
set -uo pipefail
source "$(dirname "$0")/../lib/plugin-env.sh"
source "$(dirname "$0")/../lib/tap.sh"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) is not installed"

tmp=$(mktemp -d)
server_pid=
trap '[ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# start_from_shell [NBDKIT OPTION…]: nbdkit started in the background by a
# shell that waits until it serves and then exits; sets server_pid.
start_from_shell () {
  rm -f "$tmp/sock" "$tmp/pid"
  bash -c 'nbdkit --foreground --unix "$1/sock" "${@:3}" "$2" size=1M ctl=none \
             </dev/null 2>"$1/log" &
           echo $! >"$1/pid"
           for _ in $(seq 100); do [ -S "$1/sock" ] && exit 0; sleep 0.1; done
           exit 1' start "$tmp" "$CSWAP_PLUGIN" "$@"
  server_pid=$(cat "$tmp/pid")
}

# gone_within SECONDS: the server has exited within SECONDS.
gone_within () {
  local i
  for ((i = 0; i < $1 * 10; i++)); do
    kill -0 "$server_pid" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

serves () { [ "$(nbdinfo --size "nbd+unix:///?socket=$tmp/sock")" = 1048576 ]; }

start_from_shell
sleep 1
check "nbdkit cswap outlives the shell that started it" kill -0 "$server_pid"
check "and still serves its export a second after that shell exited" serves
kill "$server_pid"
gone_within 10
server_pid=

for option in --exit-with-parent --exi; do
  start_from_shell "$option"
  check "$option: nbdkit cswap exits with the shell that started it" gone_within 10
  server_pid=
done

echo "1..$n"
exit "$status"
