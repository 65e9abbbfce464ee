# cswap bench: what xz-roundtrip.sh and sort-check.sh share, sourced.
#
# generated_input NAME MODE MIB: makes a private directory on disk, $dir
# (under ${TMPDIR:-/var/tmp}, removed at exit, a timeout's TERM included),
# writes $dir/input with `gen-text.py MODE MIB` and sets $expected to the
# SHA-256 the program must give back.  fail MESSAGE…: prints "NAME:
# MESSAGE" and exits 1, the status of a wrong result.  check_digest
# WHAT ACTUAL: fails unless ACTUAL (sha256sum's line) is $expected.
# shellcheck shell=bash

generated_input ()
{
  program_name=$1
  dir=$(mktemp -d "${TMPDIR:-/var/tmp}/cswap-$1.XXXXXX") || exit 1
  trap 'rm -rf "$dir"' EXIT
  trap 'exit 143' TERM INT HUP
  expected=$(/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/gen-text.py" "$2" "$3" \
               "$dir/input") || fail "the generator failed"
}

fail ()
{
  echo "$program_name: $*"
  exit 1
}

check_digest ()
{
  local actual=${2%% *}
  [[ $actual == "$expected" ]] || fail "$1 SHA-256 $actual, expected $expected"
}
