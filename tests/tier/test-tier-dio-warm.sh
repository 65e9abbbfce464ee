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

source "$(dirname "$0")/../lib/loop-ext4.sh"
loop_ext4 16
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
