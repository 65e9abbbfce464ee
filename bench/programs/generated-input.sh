# cswap bench: what xz-roundtrip.sh, sort-check.sh and cc-build.sh share,
# sourced.
#
# generated_input NAME MODE MIB: makes a private directory on disk, $dir
# (under ${TMPDIR:-/var/tmp}, removed at exit, a timeout's TERM included),
# writes $dir/input with `gen-text.py MODE MIB` and sets $expected to what
# the program must give back (a SHA-256, or for c the compiled program's
# output).  fail MESSAGE…: prints "NAME: MESSAGE" and exits 1, the status
# of a wrong result.  check_digest WHAT ACTUAL: fails unless ACTUAL's
# first word (sha256sum's line, or the program's output) is $expected.
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
