#!/bin/bash
# shellcheck disable=SC2016,SC2015  # eval strings expand later; a || bail_out after a chain is meant
# cswap: a ladder step is the device `ladder add` checked, not the name it
# was given (issue 53, item 1).  The step is added by a symlink to a real
# step (a direct-I/O loop device over cswap-fuse's file at its window),
# and the symlink is then pointed at a decoy: another swap-formatted loop
# device, over a file that is not the daemon's.  Before the fix the
# daemon kept only the name and swapped by it, so:
#   - following with a headroom the first step cannot give, it swapped on
#     the decoy (a file of the user's choosing) instead of the step;
#   - following with the step online and not needed, it swapped off the
#     decoy (any swap at all), and then wiped the real step's window while
#     it was still swap: its pages read back as zeros.
# Checked: the daemon swaps on and off the real step only, never the
# decoy; `cswapctl ladder` shows the step by its resolved name; and while
# the real step is swap, every page of it reads back as written.
# Root only (loop devices, swap); under the swap lock; a few seconds.
# Everything is undone by the EXIT trap, swap first.
set -uo pipefail
source "$(dirname "$0")/swap-lib.sh"

require_root
require_cmd losetup mkswap swapon swapoff fusermount3 jq cmp
[[ -e /dev/fuse ]] || skip_all "no /dev/fuse"
build=${CSWAP_BUILD_ROOT:?run through meson test}

work=$CLEANUP_DIR/work
mnt=$work/mnt
log=$work/daemon.log
ctl=("$build/control/cswapctl" --socket "$work/ctl.sock")
M=$((1 << 20))
mkdir -p "$mnt" || bail_out "mkdir $mnt failed"

swap_off_if_on () { grep -q "^$1 " /proc/swaps && swap_off "$1"; return 0; }
is_swap () { grep -q "^$1 " /proc/swaps; }

"$build/daemon/cswap-fuse" -f --size 64M -o "ctl=$work/ctl.sock" "$mnt" \
  2>"$log" &
cleanup_push fuse_unmount "$mnt" "$!"
wait_for "[[ -e $mnt/swap && -S $work/ctl.sock ]]" 20 \
  || bail_out "cswap-fuse did not come up: $(cat "$log")"

swap_lock
# window OFFSET LENGTH: a direct-I/O loop device over that window.
window ()
{
  local dev
  dev=$(losetup --direct-io=on --show -f -o "$1" --sizelimit "$2" "$mnt/swap") \
    || bail_out "losetup of the window $1+$2 failed"
  cleanup_push losetup -d "$dev"
  echo "$dev"
}
first=$(window 0 $((16 * M))) || exit
real=$(window $((16 * M)) $((16 * M))) || exit
truncate -s $((16 * M)) "$work/decoy.img" || bail_out "truncate failed"
decoy=$(losetup --show -f "$work/decoy.img") || bail_out "losetup of the decoy failed"
cleanup_push losetup -d "$decoy"
for d in "$first" "$real" "$decoy"; do
  mkswap "$d" >/dev/null || bail_out "mkswap $d failed"
  cleanup_push swap_off_if_on "$d"
done
link=$work/step
cleanup_push "${ctl[@]}" ladder stop

# add_by_link: the two steps, the second by the symlink to the real
# step, which then points at the decoy.
add_by_link ()
{
  ln -sfn "$real" "$link" \
    && "${ctl[@]}" ladder add "$first" 0 $((16 * M)) 10 >/dev/null \
    && "${ctl[@]}" ladder add "$link" $((16 * M)) $((16 * M)) 5 >/dev/null \
    && ln -sfn "$decoy" "$link" || bail_out "ladder add failed"
}

# ---- swapon: a headroom over what the first step gives ----
swapon -p 10 "$first" || bail_out "swapon $first failed"
add_by_link
shown=$("${ctl[@]}" --json ladder | jq -r '.steps[1].device')
check "cswapctl ladder shows the step as the device it opened ($shown, want $real)" \
  test "$shown" = "$real"
"${ctl[@]}" ladder follow 20M >/dev/null || bail_out "ladder follow failed"
wait_for "is_swap $real || is_swap $decoy" 10
diag "$(cat /proc/swaps)"
check "the daemon did not swap on the symlink's new target $decoy" \
  eval "! is_swap $decoy"
check "it swapped on the step it checked, $real" is_swap "$real"
"${ctl[@]}" ladder stop >/dev/null

# ---- swapoff: the real step online, not needed; the decoy is swap ----
swap_off_if_on "$real"
swap_off_if_on "$decoy"
# Pages 1 to 15 of the real step as a swapped page would be: a pattern,
# written under the swap header, kept by a swapon without discard.
head -c $((15 * 4096)) /dev/urandom >"$work/pattern"
dd if="$work/pattern" of="$real" bs=4096 seek=1 oflag=direct conv=notrunc status=none \
  || bail_out "writing the pattern to $real failed"
swapon -p 5 "$real" && swapon -p 1 "$decoy" || bail_out "swapon failed"
add_by_link
"${ctl[@]}" ladder follow 4M >/dev/null || bail_out "ladder follow failed"
wait_for "! is_swap $real || ! is_swap $decoy" 10
# Read while the step may still be swap (a reader does not need it
# exclusive).
dd if="$real" of="$work/read" bs=4096 skip=1 count=15 iflag=direct status=none
real_is_swap=no
is_swap "$real" && real_is_swap=yes
diag "$(cat /proc/swaps)"
check "the daemon did not swap off the symlink's new target $decoy" is_swap "$decoy"
check "it swapped off the step it checked, $real" test "$real_is_swap" = no
check "while $real is swap ($real_is_swap), its pages read back as written" \
  eval '[[ $real_is_swap == no ]] || cmp -s "$work/pattern" "$work/read"'
stats=$("${ctl[@]}" --json stats)
diag "ladder: swapons $(jq -r .ladder_swapons <<<"$stats"), swapoffs $(jq -r .ladder_swapoffs <<<"$stats"), errors $(jq -r .ladder_swap_errors <<<"$stats")"
"${ctl[@]}" ladder stop >/dev/null
tap_done
