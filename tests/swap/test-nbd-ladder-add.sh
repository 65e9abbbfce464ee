#!/bin/bash
# cswap: the nbdkit plugin takes a ladder's steps (`cswapctl ladder add`)
# only from the devices that serve its own windows (window exports,
# daemon/nbdkit/nbd-window.h; ladder-steps.c's check_served_window): with
# frontend = nbd, `cswap up` connects an nbd device to each window and
# hands them over, and the daemon will swap them on and off by itself.
# This host has no nbd driver, so nbdfuse turns each window export into a
# file and a direct-I/O loop device stands for the nbd device: the check
# reads the device's first page through whatever lies below it.  Checked:
#   - a window's device is taken once mkswap has given it a header;
#   - refused: a window with no swap header yet; a device of another
#     length than the window; a device whose header is another server's
#     window's at the same place; the same device twice;
#   - `cswapctl ladder` lists the steps taken.
# Nothing is swapped on.  Root only (loop devices); a few seconds.
set -uo pipefail
source "$CSWAP_SOURCE_ROOT/tests/swap/swap-lib.sh"
# The plugin inside nbdkit needs a sanitizer build's runtimes preloaded.
source "$CSWAP_SOURCE_ROOT/tests/lib/sanitizer-env.sh"

require_root
require_cmd nbdkit nbdfuse losetup mkswap fusermount3 jq
[[ -c /dev/fuse ]] || skip_all "no /dev/fuse"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
work=$CLEANUP_DIR
ctl=("$CSWAP_BUILD_ROOT/control/cswapctl" --socket "$work/ctl.sock")
M=$((1 << 20))

# start_server NAME: an nbdkit cswap server of 64 MiB on $work/NAME.sock.
start_server ()
{
  local name=$1 options=(size=64M ctl=none)
  [[ $name == ours ]] && options=(size=64M "ctl=$work/ctl.sock")
  nbdkit --foreground --exit-with-parent --tls=off --unix "$work/$name.sock" \
    --pidfile "$work/$name.pid" "$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so" \
    "${options[@]}" 2>"$work/$name.log" &
  cleanup_push stop_daemon "$!"
  wait_for "[[ -s $work/$name.pid ]]" 20 || bail_out "nbdkit did not start: $(cat "$work/$name.log")"
}

# window_device SERVER OFFSET LENGTH: prints a loop device over SERVER's
# window export OFFSET:LENGTH (nbdfuse makes it a file).
window_device ()
{
  local server=$1 offset=$2 length=$3 mnt=$work/mnt-$1-$2-$3
  mkdir -p "$mnt"
  nbdfuse -P "$mnt.pid" "$mnt/window" \
    "nbd+unix:///window:$offset:$length?socket=$work/$server.sock" >/dev/null &
  cleanup_push fuse_unmount "$mnt" "$!"
  wait_for "[[ -s $mnt.pid ]]" 20 || bail_out "nbdfuse did not mount $server's window $offset:$length"
  attach_loop "$mnt/window"
}

# add DEVICE OFFSET LENGTH: `ladder add` at priority 5; its message on
# stderr, kept in $work/add.err.
add ()
{
  "${ctl[@]}" ladder add "$1" "$2" "$3" 5 >/dev/null 2>"$work/add.err"
}

refused_as ()                   # refused_as PATTERN DEVICE OFFSET LENGTH
{
  local pattern=$1; shift
  ! add "$@" && grep -q -- "$pattern" "$work/add.err" || { diag "$(cat "$work/add.err")"; false; }
}

start_server ours
start_server theirs
first=$(window_device ours 0 $((16 * M)))
second=$(window_device ours $((16 * M)) $((16 * M)))
third=$(window_device ours $((32 * M)) $((32 * M)))
theirs=$(window_device theirs $((32 * M)) $((32 * M)))
short=$(window_device ours $((32 * M)) $((16 * M)))

check "a window with no swap header yet is refused" \
  refused_as "holds no swap header" "$first" 0 $((16 * M))
mkswap "$first" >/dev/null && mkswap "$second" >/dev/null && mkswap "$third" >/dev/null \
  && mkswap "$theirs" >/dev/null || bail_out "mkswap failed"
check "the first window's device is taken once mkswapped" add "$first" 0 $((16 * M))
check "the same device is refused as the next step" \
  refused_as "already step 0" "$first" $((16 * M)) $((16 * M))
check "the second window's device is taken" add "$second" $((16 * M)) $((16 * M))
check "a device shorter than the window is refused" \
  refused_as "16777216 bytes, not the window's 33554432" "$short" $((32 * M)) $((32 * M))
check "another server's window at the same place is refused (its header differs)" \
  refused_as "is not the one of this daemon's window" "$theirs" $((32 * M)) $((32 * M))
check "the third window's device is taken" add "$third" $((32 * M)) $((32 * M))
steps=$("${ctl[@]}" --json ladder | jq -r '[.steps[].device] | join(" ")')
check "cswapctl ladder lists the three steps ($steps)" test "$steps" = "$first $second $third"
"${ctl[@]}" ladder stop >/dev/null
tap_done
