#!/bin/bash
# cswap tier: tier_open makes the backing file's first asynchronous
# direct write itself (tier/dio-warm.c), so that the file system's
# direct-I/O completion workqueue exists before writeback needs it under
# memory pressure: its rescuer thread, "dio/DEV" (or "kworker/R-dio/DEV"),
# is there once a backing file on a freshly mounted ext4 is opened.  Before, the first writeback
# batch made it, and in a 256 MiB VM kthreadd then deadlocked in reclaim,
# swapping out to the device whose daemon waited for it (issue 63).
# Usage: test-tier-dio-warm.sh TIER-OPEN-CLOSE.  Root only; torn down in a
# trap.
set -uo pipefail
open_close=${1:?usage: $0 tier-open-close}

if [[ $(id -u) -ne 0 ]]; then echo "1..0 # SKIP root only"; exit 0; fi
for cmd in mkfs.ext4 losetup mount umount; do
  command -v $cmd >/dev/null || { echo "1..0 # SKIP no $cmd"; exit 0; }
done

work=$(mktemp -d /var/tmp/cswap-tier-dio.XXXXXX)
dev='' mounted=''
cleanup () {
  [[ -n $mounted ]] && umount "$work/mnt"
  [[ -n $dev ]] && losetup -d "$dev"
  rm -rf "$work"
}
trap cleanup EXIT

truncate -s 16M "$work/fs.img"
mkfs.ext4 -q -F "$work/fs.img" || { echo "Bail out! mkfs.ext4"; exit 1; }
dev=$(losetup --find --show "$work/fs.img") || { echo "Bail out! losetup"; exit 1; }
mkdir "$work/mnt"
mount "$dev" "$work/mnt" && mounted=yes || { echo "Bail out! mount"; exit 1; }
# The rescuer is named after the workqueue, since 6.9 as kworker/R-NAME.
thread=dio/${dev#/dev/}
rescuer () { ps -e -o comm= | grep -qx -e "$thread" -e "kworker/R-$thread"; }
if rescuer; then echo "1..0 # SKIP $thread exists before any write"; exit 0; fi
"$open_close" "$work/mnt/backing"
rc=$?
n=0 status=0
n=$((n + 1)); if [[ $rc -eq 0 ]]; then echo "ok $n - tier_open on a fresh ext4"; else echo "not ok $n - tier_open on a fresh ext4"; status=1; fi
n=$((n + 1)); if rescuer; then echo "ok $n - $thread, the direct-I/O completion workqueue, made at open"; else echo "not ok $n - $thread, the direct-I/O completion workqueue, made at open"; status=1; fi
echo "1..$n"
exit $status
