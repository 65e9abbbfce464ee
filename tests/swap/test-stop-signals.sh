#!/bin/bash
# cswap: cswap-fuse refuses to stop while the kernel swaps to it.  A 64 MiB
# device on a direct-I/O loop device, swapped on at the lowest priority:
# SIGTERM and SIGINT leave the daemon serving, with the refusal in its log
# naming the loop device, and SIGHUP is ignored; once swap is off and the
# loop device gone, SIGTERM stops it with exit 0 and its stats line.
# cswap-fuse --swap-users, which `cswap down` asks, says the same.  No
# workload: what matters is the rule, not the pages.
#
# Usage: test-stop-signals.sh [TRANSPORT]   (classic, the default, or uring)
# Root only; one swap test at a time (swap-lib.sh's lock).  Everything it
# makes (swap, loop device, mount, daemon) is undone by the EXIT trap.
set -uo pipefail
source "$(dirname "$0")/swap-lib.sh"

transport=${1:-classic}
require_root
require_cmd losetup mkswap swapon swapoff fusermount3
[[ -e /dev/fuse ]] || skip_all "no /dev/fuse"
build=${CSWAP_BUILD_ROOT:?run through meson test}
if [[ $transport == uring ]]; then
  source "$(dirname "$0")/../lib/enable-uring.sh"
  enable_uring_set Y || skip_all "cannot turn FUSE over io_uring on"
  cleanup_push enable_uring_restore
fi

work=$CLEANUP_DIR/work
mnt=$work/mnt
log=$work/daemon.log
mkdir -p "$mnt" || bail_out "mkdir $mnt failed"

# Each undo step checks first, so that the test can take things down in
# the middle and the trap still finds nothing to trip over.
swap_off_if_on () { grep -q "^$1 " /proc/swaps && swap_off "$1"; return 0; }
detach_if_ours () { losetup "$1" 2>/dev/null | grep -q "$mnt/swap" && losetup -d "$1"; return 0; }
unmount_if_mounted () { mountpoint -q "$1" && fusermount3 -u -z "$1"; return 0; }
kill_if_alive () { kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; wait_pid_gone "$1" 5; }; return 0; }

"$build/daemon/cswap-fuse" -f --size 64M -o ctl=none --transport "$transport" \
  "$mnt" 2>"$log" &
pid=$!
cleanup_push kill_if_alive "$pid"
cleanup_push unmount_if_mounted "$mnt"
wait_for "[[ -e $mnt/swap ]]" 20 || bail_out "cswap-fuse did not mount: $(cat "$log")"

swap_lock
dev=$(losetup --direct-io=on --show -f "$mnt/swap") || bail_out "losetup failed"
cleanup_push detach_if_ours "$dev"
others=$(other_swaps "$dev")
[[ -z $others ]] || skip_all "other swap devices are active: $others"
mkswap "$dev" >/dev/null || bail_out "mkswap $dev failed"
swapon -p 0 "$dev" || bail_out "swapon $dev failed"
cleanup_push swap_off_if_on "$dev"
diag "$(cat /proc/swaps)"

alive () { kill -0 "$pid" 2>/dev/null; }
reads () { dd if="$dev" of=/dev/null bs=64k count=16 iflag=direct status=none; }
refusals () { grep -c "refusing to stop: $dev is swap; run cswap down" "$log"; }

users=$("$build/daemon/cswap-fuse" --swap-users "$mnt")
check "cswap-fuse --swap-users names $dev ($users)" test "$users" = "$dev"
for signal in TERM INT; do
  before=$(refusals)
  kill -"$signal" "$pid"
  sleep 1
  check "SIG$signal while $dev is swap: cswap-fuse keeps running" alive
  check "and says why, naming $dev" test "$(refusals)" -gt "$before"
  check "and the device still reads" reads
done
kill -HUP "$pid"
sleep 1
check "SIGHUP: cswap-fuse keeps running" alive
check "and says it ignored it" grep -q "^cswap-fuse: SIGHUP: ignored" "$log"

swap_off "$dev"
check "swapoff $dev" eval "! grep -q '^$dev ' /proc/swaps"
no_swap_users () {
  local out
  out=$("$build/daemon/cswap-fuse" --swap-users "$mnt")
  [[ $? -eq 1 && -z $out ]]
}
check "then cswap-fuse --swap-users names nothing, exit 1" no_swap_users
losetup -d "$dev"
kill -TERM "$pid"
wait_pid_gone "$pid" 10
check "with no swap on it, SIGTERM stops cswap-fuse" eval '! alive'
wait "$pid"
status=$?
check "with exit status 0 ($status)" test "$status" -eq 0
check "and its stats line" grep -q '^cswap: stats ' "$log"
diag "$(grep -v '^cswap: stats' "$log")"
check "and nothing is left mounted" eval "! mountpoint -q '$mnt'"
tap_done
