#!/bin/bash
# cswap tier: a real full disk.  A thin backing file on an 8 MiB ext4
# image, loop-mounted, that the writeback fills up: writes to it then fail
# with ENOSPC, pages stay in memory and every page still reads back.
# Usage: test-tier-full.sh TEST-TIER-BINARY.  Root only; torn down in a trap.
set -uo pipefail
test_tier=${1:?usage: $0 test-tier}

source "$(dirname "$0")/../lib/loop-ext4.sh"
loop_ext4 8
"$test_tier" full "$work/mnt/backing"
