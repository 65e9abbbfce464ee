#!/bin/bash
# cswap: the nbdkit plugin through a real NBD client, the exit stats line
# showing that trimming the whole device released every page, a full
# device's writes refused with ENOSPC and one warning, and window exports
# (window:OFFSET:LENGTH: a ladder's steps with frontend = nbd).
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

# A full device: every refused write is ENOSPC, and the log says so once
# (full-warning.c: a line a minute), not once per page.
refused=$(nbdkit -U - "$CSWAP_PLUGIN" size=16M codec=lz4 pool-limit=1M \
  --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/fill-device.py \"\$uri\"" \
  2> "$log")
warnings=$(grep -c 'cswap: warning: device full' "$log")
grep 'device full' "$log" | sed 's/^/# /'
n=$((n + 1))
if [[ ${refused:-0} -gt 0 && $warnings -eq 1 ]]; then
  echo "ok $n - pool-limit=1M: $refused writes refused with ENOSPC, one warning"
else
  echo "not ok $n - pool-limit=1M: ${refused:-no} writes refused with ENOSPC, $warnings warnings"
  status=1
fi
# Window exports: their own TAP lines, numbered after the ones so far.
while IFS= read -r line; do
  if [[ $line =~ ^(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
    n=$((n + 1))
    [[ -z ${BASH_REMATCH[1]} ]] || status=1
    echo "${BASH_REMATCH[1]}ok $n - window exports: ${BASH_REMATCH[2]}"
  else
    echo "$line"
  fi
done < <(nbdkit -U - "$CSWAP_PLUGIN" size=8M ctl=none \
           --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-window.py \"\$unixsocket\" $CSWAP_CORPUS" \
           2> "$log" || echo "not ok 0 - the window client or the server failed")
grep -v '^cswap: \(stats\|latency\)\|error: export "window' "$log" | sed 's/^/# /'
echo "1..$n"
exit $status
