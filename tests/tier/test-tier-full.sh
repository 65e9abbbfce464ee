#!/bin/bash
# cswap tier: a real full disk.  A thin backing file on an 8 MiB ext4
# image, loop-mounted, that the writeback fills up: writes to it then fail
# with ENOSPC, pages stay in memory and every page still reads back.
# Usage: test-tier-full.sh TEST-TIER-BINARY.  Root only; torn down in a trap.
set -uo pipefail
test_tier=${1:?usage: $0 test-tier}

if [[ $(id -u) -ne 0 ]]; then echo "1..0 # SKIP root only"; exit 0; fi
for cmd in mkfs.ext4 losetup mount umount; do
  command -v $cmd >/dev/null || { echo "1..0 # SKIP no $cmd"; exit 0; }
done

work=$(mktemp -d /var/tmp/cswap-tier-full.XXXXXX)
dev= mounted=
cleanup () {
  [[ -n $mounted ]] && umount "$work/mnt"
  [[ -n $dev ]] && losetup -d "$dev"
  rm -rf "$work"
}
trap cleanup EXIT

truncate -s 8M "$work/fs.img"
mkfs.ext4 -q -F "$work/fs.img" || { echo "Bail out! mkfs.ext4"; exit 1; }
dev=$(losetup --find --show "$work/fs.img") || { echo "Bail out! losetup"; exit 1; }
mkdir "$work/mnt"
mount "$dev" "$work/mnt" && mounted=yes || { echo "Bail out! mount"; exit 1; }
"$test_tier" full "$work/mnt/backing"
