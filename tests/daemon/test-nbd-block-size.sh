#!/bin/bash
# cswap: the plugin's maximum request size is one nbdkit serves.  A
# client that believes the block-size answer sends requests up to the
# maximum advertised (nbd-block-size.py says what it checks); nbdkit 1.32
# refuses any over 64 MiB, so an advertised 4 GiB broke such a client at
# 65 MiB.
set -uo pipefail
source "$(dirname "$0")/../lib/plugin-env.sh"

log=$(mktemp)
trap 'rm -f "$log"' EXIT

out=$(nbdkit -U - "$CSWAP_PLUGIN" size=128M ctl=none \
        --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-block-size.py \"\$uri\"" \
        2> "$log")
status=$?
echo "$out"
grep -v '^cswap: \(stats\|latency\)' "$log" | sed 's/^/# /'
n=$(grep -cE '^(not )?ok ' <<<"$out")
if [[ $status != 0 && $n == 0 ]]; then
  n=1
  echo "not ok 1 - the client ran (nbdkit or the client exited $status)"
fi
echo "1..$n"
exit $status
