#!/bin/bash
# cswap: the nbdkit plugin through a real NBD client, and the exit stats
# line showing that trimming the whole device released every page.
set -uo pipefail
source "$(dirname "$0")/../lib/plugin-env.sh"

log=$(mktemp)
out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT

nbdkit -U - "$CSWAP_PLUGIN" size=64M codec=lz4 \
  --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-client.py \"\$uri\" $CSWAP_CORPUS" \
  > "$out" 2> "$log"
status=$?
cat "$out"
grep -v '^cswap: stats' "$log" >&2
n=$(grep -cE '^(not )?ok ' "$out")

stats=$(grep '^cswap: stats' "$log")
echo "# $stats"
n=$((n + 1))
if [[ $stats == *" pages_stored=0 "* && $stats == *" pool_bytes=0 "* ]]; then
  echo "ok $n - after trimming everything the plugin holds no page and no pool memory"
else
  echo "not ok $n - after trimming everything the plugin holds no page and no pool memory"
  status=1
fi
echo "1..$n"
exit $status
