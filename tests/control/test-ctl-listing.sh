#!/bin/bash
# cswap: cswapctl's device listing and status paragraph, against two
# cswap-fuse daemons and no swap: A with a backing file and pages of every
# kind (text, same-filled, incompressible, compacted, written back, then
# overwritten on disk), B without one and a pool limit it hits.  Every
# column of `--output-all --raw` is parsed back and checked against
# `stats --json`; every column prints alone; --output's forms and bad
# names; the swap device the cswap helper records (a state file of the
# test's own) and its /proc/swaps line (a made-up one, bind-mounted in a
# mount namespace of the test's own, so no swap is turned on); status
# with and without warnings.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/fuse-daemon.sh"

# The cswap helper's state file is the test's, not the host's.
export CSWAP_STATE_DIR=$tmp/state
mkdir "$CSWAP_STATE_DIR"
state=$CSWAP_STATE_DIR/state
a=$tmp/a.sock
b=$tmp/b.sock
device=/dev/cswap-test-device   # names no real device has: a ladder of two
device2=/dev/cswap-test-device-2

# put NAME PAGE: standard input to NAME's device from page PAGE on.
put () {
  dd of="$tmp/mnt-$1/swap" bs=4096 seek="$2" iflag=fullblock oflag=direct \
     conv=notrunc status=none
}

# settle SOCKET: waits until the compressor thread has no page queued, so
# that the counters stay still.
settle () {
  for _ in $(seq 100); do
    [ "$("$cswapctl" -s "$1" --json stats | jq .deferred_pages)" = 0 ] &&
      return 0
    sleep 0.1
  done
  return 1
}

ctl () { "$cswapctl" --socket "$a" "$@"; }

# holds FILTER: jq's FILTER is true of the JSON on standard input.
holds () {
  jq -e "$1" >/dev/null
}

# A's pool unlimited (pool-limit=0: a backing file brings a default
# limit), so that its pages stay in memory until sent to the file.
start_fuse a --compact=off --size 64M --backing="$tmp/backing" \
  --backing-size=32M --pool-limit=0
start_fuse b --compact=off --size 16M

# A: 64 pages of text, 64 same-filled, 32 random (kept raw), 64 that
# compress to half a page, every other one of which is then zeroed so
# that compaction has zspages to empty; everything in memory written back,
# then 8 of the pages written back overwritten (their disk copies stale).
{
  yes "cswap listing" | head -c $((64 * 4096))
  tr '\0' '\1' </dev/zero | head -c $((64 * 4096))
  head -c $((32 * 4096)) /dev/urandom
} | put a 0
for _ in $(seq 64); do
  head -c 2048 /dev/urandom
  head -c 2048 /dev/zero
done | put a 256
for page in $(seq 256 2 318); do
  head -c 4096 /dev/zero | put a "$page"
done
settle "$a"
ctl compact >/dev/null
ctl writeback >/dev/null
yes "overwritten" | head -c $((8 * 4096)) | put a 0
check "A settles" settle "$a"

json=$(ctl --json stats)
check "A's pages move every counter the columns show" \
  holds '.pages_compacted > 0 and .tiered_pages > 0 and .same_filled_pages > 0
         and .huge_pages > 0 and .written_back_pages > 0
         and .backing_used_bytes > .backing_live_bytes' <<<"$json"

# ------------------------------------------------- --raw parsed back ----

columns=$(ctl --output help | sed -n 's/^  \([A-Z-]*\) .*/\1/p' | tr '\n' ' ')
raw=$(ctl --output-all --raw)
json=$(ctl --json stats)
sed 's/^/# /' <<<"$raw"
check "--output-all --raw: the header is every column of --output help" \
  test "$(head -n 1 <<<"$raw") " = "$columns"
check "--output-all --raw: one row" test "$(wc -l <<<"$raw")" = 2

# What each column must say, from the JSON reply.
expected=$(jq -r --arg socket "$a" '
  def backed(v): if .backing_size_bytes == 0 then "-" else v end;
  {
    "NAME": $socket,
    "MEM-NOW": .process_rss_bytes,
    "TOTAL": .memory_used_bytes,
    "MEM-USED": (([.pool_peak_bytes, .pool_bytes] | max) + .metadata_bytes),
    "MEM-LIMIT": (if .pool_limit_bytes == 0 then "-" else .pool_limit_bytes end),
    "POOL": .pool_bytes,
    "META": .metadata_bytes,
    "DATA": .original_bytes,
    "COMPR": .compressed_bytes,
    "COMP-RATIO": .effective_ratio,
    "ON-DISK": backed(.tiered_pages * 4096),
    "ALGORITHM": "\(.options.codec)-\(.options.level)",
    "DISKSIZE": .size_bytes,
    "SWAP-USED": "-",
    "PAGES": .pages_stored,
    "ZERO-PAGES": .same_filled_pages,
    "HUGE": .huge_pages,
    "BACKING": backed(.backing_size_bytes),
    "DISK-USED": backed(.backing_used_bytes),
    "STALE": backed(.backing_used_bytes - .backing_live_bytes),
    "WRITTEN-BACK": backed(.written_back_pages),
    "MIGRATED": .pages_compacted,
    "LIMIT-HITS": .pool_limit_hits,
    "ERRORS": (.failed_writes + .read_errors),
    "DISK-ERRORS": backed(.backing_io_errors + .backing_enospc_errors
                          + .backing_checksum_errors),
    "UPTIME": .uptime_seconds,
    "SOCKET": $socket
  } | to_entries[] | "\(.key) \(.value)"' <<<"$json")

# near GOT WANT TOLERANCE: numbers no further apart than TOLERANCE.
near () {
  awk -v g="$1" -v w="$2" -v t="$3" \
    'BEGIN { d = g - w; exit !(g ~ /^[0-9.]+$/ && d <= t && -d <= t) }'
}

read -ra names <<<"$(head -n 1 <<<"$raw")"
read -ra values <<<"$(tail -n 1 <<<"$raw")"
declare -A got
for i in "${!names[@]}"; do
  got[${names[$i]}]=${values[$i]}
done
while read -r name want; do
  case $name in
    # The daemon's RSS and uptime move between the two calls.
    MEM-NOW) check "--raw $name ${got[$name]:-} is about $want" \
               near "${got[$name]:-x}" "$want" $((1 << 20)) ;;
    UPTIME) check "--raw $name ${got[$name]:-} is about $want" \
              near "${got[$name]:-x}" "$want" 2 ;;
    COMP-RATIO) check "--raw $name ${got[$name]:-} is $want to 2 decimals" \
                  near "${got[$name]:-x}" "$want" 0.005 ;;
    *) check "--raw $name ${got[$name]:-} is $want" \
         test "${got[$name]:-}" = "$want" ;;
  esac
done <<<"$expected"

every_column_alone () {
  local column out bad=
  for column in $columns; do
    out=$(ctl --output "$column") || bad+=" $column"
    [ "$(wc -l <<<"$out")" = 2 ] &&
      [ "$(head -n 1 <<<"$out" | tr -d ' ')" = "$column" ] ||
      bad+=" $column"
  done
  [ -z "$bad" ] || echo "# wrong:$bad"
  [ -z "$bad" ]
}
check "every column prints alone, under its name" every_column_alone

# ------------------------------------------------------- the forms ----

check "sizes read as zramctl's: 64M, 32M" \
  test "$(ctl -n -o DISKSIZE,BACKING)" = "64M 32M"
check "--bytes: exact bytes" \
  test "$(ctl -n --bytes -o DISKSIZE,BACKING)" = "67108864 33554432"
check "no pool limit: MEM-LIMIT is -" test "$(ctl -n -o MEM-LIMIT)" = "-"
check "the default listing: memory first" \
  grep -q '^NAME *MEM-NOW *TOTAL .*ALGORITHM *DISKSIZE$' <<<"$(ctl)"
check "no command is stats" \
  test "$(ctl -o NAME,DATA)" = "$(ctl -o NAME,DATA stats)"
check "names in any case" \
  test "$(ctl -o name,Data,comp-ratio | head -n 1 | tr -s ' ')" = \
       "NAME DATA COMP-RATIO"
check "+LIST: the default columns, then LIST" \
  test "$(ctl -o +SOCKET | head -n 1 | tr -s ' ')" = \
       "$(ctl | head -n 1 | tr -s ' ') SOCKET"
check "--noheadings: the row alone" test "$(ctl -n | wc -l)" = 1
ln -s "$a" "$tmp/a b.sock"
check "--raw escapes a space in a cell" \
  test "$("$cswapctl" -s "$tmp/a b.sock" -n --raw -o SOCKET)" = \
       "$tmp/a\\x20b.sock"

check "an unknown column: exit 2, and the valid names" \
  exits 2 "unknown column 'FOO' (valid: NAME,MEM-NOW,TOTAL,MEM-USED," \
  ctl -o NAME,FOO
lists_every_column () {
  local message column
  message=$(ctl -o FOO 2>&1)
  for column in $columns; do
    grep -q "[ ,]${column}[,;]" <<<"$message" || return 1
  done
}
check "the error lists every column" lists_every_column
check "zramctl's STREAMS has no counterpart: exit 2" \
  exits 2 "unknown column 'STREAMS'" ctl -o STREAMS
check "an empty name: exit 2" exits 2 "unknown column ''" ctl -o NAME,
check "an empty list: exit 2" exits 2 "unknown column ''" ctl -o ''
check "--output with another command: exit 2" \
  exits 2 "for the device listing" ctl -o NAME classes
check "--raw with a command without a table: exit 2" \
  exits 2 "are for tables" ctl --raw get
check "--json status: exit 2" exits 2 "prints no JSON" ctl --json status
check "two sockets for compact: exit 2" \
  exits 2 "one socket at a time" "$cswapctl" -s "$a" -s "$b" compact

# ------------------------------------------- sockets and devices ----

check "two sockets: one row each, in order" \
  test "$("$cswapctl" -s "$a" -s "$b" -n --raw -o NAME,DISKSIZE)" = \
       "$a 67108864
$b 16777216"
printf 'pid=1\nsocket=%s\ndevices=%s %s\n' "$a" "$device" "$device2" >"$state"
check "no --socket: the socket the cswap service recorded" \
  test "$("$cswapctl" -n -o SOCKET)" = "$a"
check "NAME: the first device recorded for the socket, else the socket" \
  test "$("$cswapctl" -s "$a" -s "$b" -n --raw -o NAME,SOCKET)" = \
       "$device $a
$b $b"
check "SWAP-USED: - for a device that is not swap" \
  test "$(ctl -n -o SWAP-USED)" = "-"
paragraph=$(ctl status | tr '\n' ' ')
echo "# $paragraph"
check "status: a recorded device that is not swap" \
  grep -q "^$device: not swap now; " <<<"$paragraph"

# The kernel's view, made up: /proc/swaps says the ladder is 91% used,
# in two steps of 32 MiB (and another device, not ours, in between).
with_swaps () {
  # shellcheck disable=SC2016  # expanded by sh -c
  unshare --mount --propagation private sh -c \
    'mount --bind "$0" /proc/swaps && exec "$@"' "$tmp/swaps" "$@"
}
printf 'Filename\tType\tSize\tUsed\tPriority\n%s partition 32766 30000 100\n%s partition 9999 999 99\n%s partition 32766 30000 98\n' \
  "$device" /dev/other "$device2" >"$tmp/swaps"
if command -v unshare >/dev/null && with_swaps true 2>/dev/null; then
  check "SWAP-USED: the devices' Used in /proc/swaps added up, in bytes" \
    test "$(with_swaps "$cswapctl" -s "$a" -n --raw -o NAME,SWAP-USED)" = \
         "$device $((60000 * 1024))"
  paragraph=$(with_swaps "$cswapctl" -s "$a" status | tr '\n' ' ')
  echo "# $paragraph"
  check "status: the kernel's swap in use on the device" \
    grep -q "^$device: 58.6 MiB of swap in use, of 64.0 MiB\. " <<<"$paragraph"
  check "status: the device nearly full is a warning" \
    grep -q "Warnings: the device is 91% full\.  *$" <<<"$paragraph"
else
  echo "# no mount namespace: the /proc/swaps checks are left out"
fi
rm "$state"

# ---------------------------------------------------------- status ----

paragraph=$(ctl status | tr '\n' ' ')
echo "# $paragraph"
json=$(ctl --json stats)
check "status: what is stored, with no device recorded" \
  grep -q "^$a: [0-9.]* [KM]iB stored, of 64.0 MiB (no swap device is recorded" \
  <<<"$paragraph"
check "status: memory now and its peak, in TOTAL and MEM-USED's words" \
  grep -q "The pages take [0-9.]* [KM]iB of RAM now (peak [0-9.]* [KM]iB)" \
  <<<"$paragraph"
check "status: the ratio" \
  grep -q "a ratio of $(printf %.2f "$(jq .effective_ratio <<<"$json")")" \
  <<<"$paragraph"
check "status: the daemon's memory in all" \
  grep -q "the daemon holds [0-9.]* MiB of RAM in all\." <<<"$paragraph"
check "status: the backing file, and what is stale on it" \
  grep -q "On the backing file: [0-9.]* [KM]iB of data, in [0-9.]* [KM]iB of its 32.0 MiB ([0-9.]* [KM]iB of it stale)\." \
  <<<"$paragraph"
check "status: no warnings" grep -q "No warnings\.  *$" <<<"$paragraph"

# B: a pool limit far below what is written, and no backing file.
"$cswapctl" -s "$b" set pool-limit 64K >/dev/null
for page in $(seq 0 63); do
  head -c 4096 /dev/urandom | put b "$page" 2>/dev/null
done
settle "$b"
paragraph=$("$cswapctl" -s "$b" status | tr '\n' ' ')
echo "# $paragraph"
json=$("$cswapctl" -s "$b" --json stats)
check "B: writes refused" holds '.failed_writes > 1 and .pool_limit_hits > 1' \
  <<<"$json"
check "status: no backing file" grep -q " No backing file\. " <<<"$paragraph"
check "status: the pool limit hit, as a warning" \
  grep -q "Warnings: the pool limit (64.0 KiB) was hit $(jq .pool_limit_hits <<<"$json") times" \
  <<<"$paragraph"
check "status: the pages not stored, as a warning" \
  grep -q "; $(jq .failed_writes <<<"$json") pages could not be stored" \
  <<<"$paragraph"
check "B's ERRORS and LIMIT-HITS columns" \
  test "$("$cswapctl" -s "$b" -n --raw -o ERRORS,LIMIT-HITS,MEM-LIMIT)" = \
       "$(jq -r '"\(.failed_writes + .read_errors) \(.pool_limit_hits) 65536"' <<<"$json")"
check "status of two sockets: two paragraphs" \
  test "$("$cswapctl" -s "$a" -s "$b" status | grep -c '^$')" = 1

done_testing
