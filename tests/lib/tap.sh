# cswap: sourced by shell tests: TAP counting and skipping, and a check of
# a command's exit status and message.  $n counts the checks, $status is
# 1 once one failed.  A skipped test prints the plan "1..0 # SKIP why" and
# exits 0: meson (1.0.1, Debian 12's) counts a TAP test exiting 77 as an
# error, not a skip.
# shellcheck shell=bash

n=0
status=0

skip () {
  echo "1..0 # SKIP $*"
  exit 0
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

# todo_check NAME COMMAND...: a check known to fail, NAME ending in
# "# TODO why": shown, and TAP counts its failure as expected, so it does
# not fail the test.
todo_check () {
  local status_before=$status
  check "$@"
  status=$status_before
}

# exits CODE PATTERN COMMAND...: COMMAND exits with CODE and says PATTERN
# (on standard output or error); its first lines go to the log.
exits () {
  local code=$1 pattern=$2 message got
  shift 2
  message=$("$@" 2>&1)
  got=$?
  sed 's/^/# /' <<<"$message" | head -3
  [ "$got" -eq "$code" ] && grep -q -- "$pattern" <<<"$message"
}

# tap_include FILE: the checks of another TAP stream in FILE (fuse-io's),
# renumbered to follow this test's, its other lines as they are.
tap_include () {
  local line
  while IFS= read -r line; do
    if [[ $line =~ ^(not\ )?ok\ [0-9]+(.*)$ ]]; then
      n=$((n + 1))
      echo "${BASH_REMATCH[1]}ok $n${BASH_REMATCH[2]}"
      [ -z "${BASH_REMATCH[1]}" ] || status=1
    elif [[ ! $line =~ ^1\.\. ]]; then
      echo "$line"
    fi
  done <"$1"
}

done_testing () {
  echo "1..$n"
  exit $status
}
