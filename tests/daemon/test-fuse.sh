#!/bin/bash
# cswap: cswap-fuse end to end — mount, random I/O checked against a
# reference (fuse-io), the operations a fixed-size device file refuses, a
# final punch of the whole file, a clean stop on SIGTERM with the exit stats
# line showing no page and no pool memory left, and the error messages.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip "mounting the device file needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
fuse_io=$CSWAP_BUILD_ROOT/tests/daemon/fuse-io

size=$((64 * 1024 * 1024))
mnt=$(mktemp -d)
log=$(mktemp)
out=$(mktemp)
pid=
cleanup () {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  grep -qs " $mnt fuse" /proc/mounts && fusermount3 -u -z "$mnt"
  rmdir "$mnt"
  rm -f "$log" "$out"
}
trap cleanup EXIT

not () {
  ! "$@"
}

write_past_end_fails () {
  local message
  message=$(dd if=/dev/zero of="$mnt/swap" bs=4096 seek=$((size / 4096)) \
              count=1 conv=notrunc status=none 2>&1) && return 1
  echo "# $message"
  grep -q 'File too large' <<<"$message"
}

stats_show_nothing_held () {
  [[ $stats == *" pages_stored=0 "* && $stats == *" pool_bytes=0 "* ]]
}

mounted () {
  grep -qs " $mnt fuse.cswap " /proc/mounts
}

# Runs cswap-fuse with ARGS, expecting failure with a message matching
# PATTERN.
fails_with () {
  local pattern=$1
  shift
  local message
  # timeout: should it mount after all, the test must not hang.
  if message=$(timeout 10 "$cswap_fuse" -f "$@" 2>&1); then
    echo "# cswap-fuse $* succeeded"
    return 1
  fi
  echo "# $message"
  grep -q -- "$pattern" <<<"$message"
}

check "a missing mount point is named" \
  fails_with "$mnt/missing: No such file or directory" --size 64M "$mnt/missing"
check "a bad size names the option" \
  fails_with "size=12345: the size must be" --size=12345 "$mnt"
check "a bad -o size names the option" \
  fails_with "size=64Q" -o size=64Q "$mnt"
check "an unknown option is named" \
  fails_with "--frobnicate: unknown option" --frobnicate 1 --size 64M "$mnt"
check "an unknown -o option is named" \
  fails_with "frobnicate" -o frobnicate=1 --size 64M "$mnt"
check "size is required" fails_with "size=SIZE is required" "$mnt"

"$cswap_fuse" -f --size "$size" -o codec=lz4 --threads 8 "$mnt" 2>"$log" &
pid=$!
for _ in $(seq 100); do
  mounted && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
mounted || { echo "Bail out! cswap-fuse did not mount"; cat "$log" >&2; exit 1; }

check "the mount holds one file, swap, of the device's size, mode 0600" \
  test "$(ls "$mnt")" = swap -a "$(stat -c '%s %a' "$mnt/swap")" = "$size 600"
check "mounting again on the same directory is refused" \
  fails_with "already a mount point" --size 64M "$mnt"

"$fuse_io" "$mnt/swap" 4 3000 >"$out"
io_status=$?
grep -v '^1\.\.' "$out" | while IFS= read -r line; do
  if [[ $line =~ ^(not\ )?ok\ [0-9]+(.*)$ ]]; then
    n=$((n + 1))
    echo "${BASH_REMATCH[1]}ok $n${BASH_REMATCH[2]}"
  else
    echo "$line"
  fi
done
n=$((n + $(grep -cE '^(not )?ok ' "$out")))
check "fuse-io exited 0" test "$io_status" -eq 0

check "truncate is refused" not truncate -s 1M "$mnt/swap"
check "O_TRUNC is refused" not sh -c ": > '$mnt/swap'"
check "creating another file is refused" not touch "$mnt/other"
check "removing the file is refused" not rm -f "$mnt/swap"
check "writing past the end fails with EFBIG" write_past_end_fails
check "punching the whole file succeeds" \
  fallocate --punch-hole --offset 0 --length "$size" "$mnt/swap"
check "after the punch the file reads as zeros" \
  cmp -s -n "$size" "$mnt/swap" /dev/zero

kill -TERM "$pid"
wait "$pid"
exit_status=$?
pid=
check "cswap-fuse exits 0 on SIGTERM" test "$exit_status" -eq 0
check "and leaves nothing mounted" not mounted

grep -v '^cswap: stats' "$log" | sed 's/^/# /'
stats=$(grep '^cswap: stats' "$log")
echo "# $stats"
check "after punching everything cswap-fuse holds no page and no pool memory" \
  stats_show_nothing_held

done_testing
