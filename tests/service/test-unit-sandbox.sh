#!/bin/bash
# cswap: cswap.service's sandbox holds what the front ends need and no
# more (issue 62, item 12).  A static check of the built unit: each
# device, capability and socket family it allows is listed here with the
# front end or command that needs it, and any other fails this test, as
# does one of these gone missing.  Whether the front ends work under it
# is tests/trixie/test-trixie-vm.sh's part (ublk, then FUSE, under
# systemd) and tests/service/test-unit-realtime.sh's (the capabilities:
# SCHED_FIFO).  With a systemd-analyze that has --offline, the unit's
# exposure score must stay at or below the one measured when the sandbox
# was drawn (3.8; 9.1 before).
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/tap.sh"
unit=${1:-$CSWAP_BUILD_ROOT/systemd/cswap.service}
[[ -r $unit ]] || skip "no built unit $unit"

# settings KEY: every value of KEY= in [Service], one word a line.
settings ()
{
  awk -v key="$1" '/^\[/ { in_service = ($0 == "[Service]"); next }
    in_service && index($0, key "=") == 1 { sub(/^[^=]*=/, ""); print }' "$unit"
}
# same NAME WANT GOT: the two lists hold the same lines; the difference
# is shown.
same ()
{
  local extra missing
  extra=$(comm -13 <(sort -u <<<"$2") <(sort -u <<<"$3"))
  missing=$(comm -23 <(sort -u <<<"$2") <(sort -u <<<"$3"))
  [[ -z $extra ]] || echo "# $1 allowed without a reason here: $extra" | tr '\n' ' '
  [[ -z $missing ]] || echo "# $1 missing: $missing" | tr '\n' ' '
  [[ -z $extra$missing ]] && return 0
  echo
  return 1
}

# The devices, one "DEVICE MODE" a line, and who opens them.  Not
# block-blkext (major 259): the ublk disks live there, and so does
# every NVMe namespace; `cswap attach` allows each ublk disk by name.
devices='/dev/fuse rw
/dev/loop-control rw
block-loop rw
block-nbd rw
/dev/ublk-control rw
char-ublk-char rw'
#  /dev/fuse, the loop devices: fuse; block-nbd: nbd; the rest: ublk.
check "DevicePolicy=closed" test "$(settings DevicePolicy)" = closed
check "DeviceAllow= is what fuse, nbd and ublk open, not block-blkext" \
  same DeviceAllow "$devices" "$(settings DeviceAllow)"

# The capabilities (the unit's comment says which call needs each).
caps='CAP_SYS_ADMIN
CAP_SYS_CHROOT
CAP_SYS_PTRACE
CAP_IPC_LOCK
CAP_SYS_NICE
CAP_SYS_RESOURCE
CAP_NET_ADMIN
CAP_CHOWN'
check "CapabilityBoundingSet= is the daemon's and the commands' capabilities" \
  same CapabilityBoundingSet "$caps" "$(settings CapabilityBoundingSet | tr -s ' ' '\n')"

# AF_UNIX: control socket, nbdkit, journal, sd_notify; AF_NETLINK:
# nbd-client, udev.
check "RestrictAddressFamilies= is AF_UNIX and AF_NETLINK" \
  same RestrictAddressFamilies "AF_UNIX
AF_NETLINK" "$(settings RestrictAddressFamilies | tr -s ' ' '\n')"

# An allow list: the service's usual calls, FUSE's mount, swapon and
# swapoff, io_uring, and mincore (a take-over's look at the killed
# daemon's slot table).  Anything else fails with EPERM, not SIGSYS.
calls='@system-service
@mount
@swap
io_uring_setup
io_uring_enter
io_uring_register
mincore'
check "SystemCallFilter= allows the service's calls, mount, swap, io_uring and mincore only" \
  same SystemCallFilter "$calls" "$(settings SystemCallFilter | tr -s ' ' '\n')"
check "a call left out fails with EPERM (the daemon is not killed)" \
  test "$(settings SystemCallErrorNumber)" = EPERM
check "no RestrictRealtime= (the I/O threads run SCHED_FIFO)" \
  test -z "$(settings RestrictRealtime)"
check "scripts/cswap allows the ublk disks by name at attach" \
  grep -q 'allow_ublk_disks "${devices\[@\]}"' "$CSWAP_SOURCE_ROOT/scripts/cswap/device.sh"

if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
  score=$(cd "$(dirname "$unit")" && systemd-analyze security --offline=true \
            --no-pager "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  echo "# systemd-analyze security --offline=true: exposure $score"
  check "systemd-analyze security: exposure $score, at most 3.8" \
    awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.8) }'
else
  check "# SKIP systemd-analyze has no --offline (systemd < 252)" true
fi
echo "1..$n"
exit $status
