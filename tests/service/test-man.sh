#!/bin/bash
# shellcheck disable=SC2016,SC2001  # eval and --run strings expand later, on purpose
# cswap: every manual page renders without a warning from man or groff.
# Usage: test-man.sh PAGE…
set -uo pipefail
command -v man >/dev/null || { echo "1..0 # SKIP man is not installed"; exit 0; }
n=0 failed=0
for page in "$@"; do
  n=$((n + 1))
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  if [[ -z $warnings ]]; then
    echo "ok $n - ${page##*/} renders without warnings"
  else
    failed=$((failed + 1))
    echo "not ok $n - ${page##*/}:"
    sed 's/^/# /' <<<"$warnings"
  fi
done
echo "1..$n"
[[ $failed -eq 0 ]]
