#!/bin/bash
# cswap tests: writes the fuzz seeds that put every number an option or a
# command takes at and around each integer type's limit (issue 27: an
# idle-writeback of 2^32 - 1 divided by zero).  Run from the source root
# after adding a numeric option, key or command argument; the files are
# committed, so the fuzz tests replay them on every run:
#
#   tests/lib/limit-corpus.sh
#
# Config seeds go to tests/daemon/fuzz-config-corpus/limit-KEY-N, command
# seeds to tests/control/fuzz-corpus/limit-WORDS-N.
set -euo pipefail

# 0, 1, 2^31 - 1, 2^31, 2^32 - 1, 2^32, 2^63 - 1, 2^64 - 1, 2^64, negative,
# huge; and a page less one, a page, for the sizes.
values=(0 1 2147483647 2147483648 4294967295 4294967296
        9223372036854775807 18446744073709551615 18446744073709551616
        -1 -9223372036854775808 99999999999999999999999999999999 4095 4096)

config_keys=(size level cold-after pool-limit huge-threshold
             max-zspage-pages backing-size reserve accept-threshold
             writeback-batch idle-writeback writeback-limit writeback-burst
             compact-threshold ctl-uid priority ladder-step ladder-headroom)
# Commands and their numeric arguments, the number last.
commands=("set pool-limit" "set level" "set cold-after"
          "set accept-threshold" "set writeback-batch" "set idle-writeback"
          "set writeback-limit" "set writeback-burst" "writeback idle="
          "writeback max=")

config_dir=tests/daemon/fuzz-config-corpus
command_dir=tests/control/fuzz-corpus
rm -f "$config_dir"/limit-* "$command_dir"/limit-*
for key in "${config_keys[@]}"; do
  for i in "${!values[@]}"; do
    # With the options the tier's keys need, so that a value the parser
    # takes is checked by the fuzz target's bounds, not refused for them.
    printf 'size = 16M\nbacking = /var/tmp/cswap-fuzz\n%s = %s\n' \
      "$key" "${values[$i]}" > "$config_dir/limit-$key-$i"
  done
done
for command in "${commands[@]}"; do
  name=${command// /-}
  name=${name%=}
  sep=" "
  [[ $command == *= ]] && sep=""
  for i in "${!values[@]}"; do
    printf '%s%s%s' "$command" "$sep" "${values[$i]}" \
      > "$command_dir/limit-$name-$i"
  done
done
