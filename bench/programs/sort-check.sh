#!/bin/bash
# cswap bench: GNU sort of a large generated text file, in memory.
#
# usage: sort-check.sh MIB
#
# Writes about MIB MiB of lines with unique ten-digit keys in a shuffled
# order and words after them (gen-text.py keyed) to a private directory
# on disk and sorts the file with `LC_ALL=C sort -S 1G`: a buffer larger
# than the file, so sort holds all of it (the text and 32 bytes a line)
# in memory and sorts it there with its threads, as one does to sort a
# file that fits.  Checks its own result without sorting: the generator
# makes the lines again in key order and gives their SHA-256, which the
# output of sort must have; exits 1 when it does not, or when a step
# fails.  The directory is removed at exit.
set -uo pipefail
mib=${1:?usage: $0 MIB}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

dir=$(mktemp -d "${TMPDIR:-/var/tmp}/cswap-sort.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'exit 143' TERM INT HUP
fail () { echo "sort-check: $*"; exit 1; }

expected=$(/usr/bin/python3 "$here/gen-text.py" keyed "$mib" "$dir/input") \
  || fail "the generator failed"
# -T: should sort spill after all, its temporary files go to the same place.
actual=$(LC_ALL=C sort -S 1G -T "$dir" "$dir/input" | sha256sum) || fail "sort failed"
actual=${actual%% *}
if [[ $actual != "$expected" ]]; then
  fail "$mib MiB: sorted SHA-256 $actual, expected $expected"
fi
echo "sort-check: $mib MiB of keyed lines sorted, SHA-256 ok"
