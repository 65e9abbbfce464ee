# cswap: sourced by shell tests: TAP counting and skipping.  $n counts
# the checks, $status is 1 once one failed.
# shellcheck shell=bash

n=0
status=0

skip () {
  echo "1..0 # SKIP $*"
  exit 77
}

check () {                      # check NAME COMMAND...: ok if it succeeds
  local name=$1
  shift
  n=$((n + 1))
  if "$@"; then
    echo "ok $n - $name"
  else
    echo "not ok $n - $name"
    status=1
  fi
}

done_testing () {
  echo "1..$n"
  exit $status
}
