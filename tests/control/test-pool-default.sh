#!/bin/bash
# cswap: a backing file and no pool-limit (issue 63): the pool gets the
# default limit, a fifth of the RAM, says so (the stats, cswapctl status,
# cswap-fuse --check-config), and writes past it send cold pages to the
# file instead of growing the pool: every page reads back as written.
# Before, pool-limit had no default and a backing file received pages
# only from the idle sweep: the pool grew without bound beside an empty
# file.  The RAM is CSWAP_TEST_RAM_MIB's: 40 MiB, so the limit is 8 MiB,
# and 32 MiB of pages are written.
set -uo pipefail
source "$(dirname "$0")/../lib/plugin-env.sh"
source "$(dirname "$0")/../lib/tap.sh"

cswapctl=$CSWAP_BUILD_ROOT/control/cswapctl
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
tmp=$(mktemp -d)
pid=
cleanup () {
  [ -z "$pid" ] || { kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; }
  rm -rf "$tmp"
}
trap cleanup EXIT
export CSWAP_TEST_RAM_MIB=40
limit=$((8 << 20))

printf 'backing = %s\nbacking-size = 64M\n' "$tmp/backing" > "$tmp/cswap.conf"
listing=$(CSWAP_VENDOR_CONFIG_DIR=$tmp/none "$cswap_fuse" --check-config "$tmp/cswap.conf" 2>&1)
sed 's/^/# /' <<<"$listing"
check "--check-config: the pool limit shown as the default a backing file brings" \
  grep -qx 'pool-limit = ram / 5  # default with a backing file, 8 MiB' <<<"$listing"
printf 'backing = none\n' > "$tmp/none.conf"
listing=$(CSWAP_VENDOR_CONFIG_DIR=$tmp/none "$cswap_fuse" --check-config "$tmp/none.conf" 2>&1)
check "--check-config: backing = none, no default pool limit" \
  eval '! grep -q "^pool-limit" <<<"$listing"'

nbdkit -f -U "$tmp/nbd.sock" "$CSWAP_PLUGIN" size=64M ctl="$tmp/ctl.sock" \
  config="$tmp/cswap.conf" 2> "$tmp/daemon.log" &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/ctl.sock" ] && break; sleep 0.1; done
[ -S "$tmp/ctl.sock" ] || { echo "Bail out! nbdkit did not start"; cat "$tmp/daemon.log"; exit 1; }

stat () { "$cswapctl" --socket "$tmp/ctl.sock" --json stats | jq -e ".$1"; }
check "the pool limit is 8 MiB, a fifth of 40" test "$(stat pool_limit_bytes)" = "$limit"
check "and the stats call it the default" test "$(stat pool_limit_default)" = 1

# 32 MiB of pages, each half random (about 2:1), then all read back.
/usr/bin/python3 - "$tmp/nbd.sock" > "$tmp/pages.log" 2>&1 <<'PY'
import hashlib, os, sys
import nbd
h = nbd.NBD()
h.connect_unix(sys.argv[1])
chunk, digests = 1 << 20, []
for i in range(32):
    data = b"".join(os.urandom(2048) + bytes(2048) for _ in range(chunk // 4096))
    digests.append(hashlib.sha256(data).digest())
    h.pwrite(data, i * chunk)
h.flush()
for i in range(32):
    assert hashlib.sha256(h.pread(chunk, i * chunk)).digest() == digests[i], f"MiB {i} differs"
h.shutdown()
PY
rc=$?
sed 's/^/# /' "$tmp/pages.log"
check "32 MiB written past the 8 MiB limit, every page read back as written" test "$rc" = 0
check "the pool held to its limit" test "$(stat pool_bytes)" -le "$limit"
tiered=$(stat tiered_pages)
check "cold pages went to the backing file ($tiered pages)" test "$tiered" -gt 4096
check "no write refused" test "$(stat failed_writes)" = 0
paragraph=$("$cswapctl" --socket "$tmp/ctl.sock" status)
sed 's/^/# /' <<<"$paragraph"
paragraph=$(tr "\n" " " <<<"$paragraph")
check "cswapctl status says the limit is the default" \
  grep -q 'the pool limited to 8.0 MiB by default' <<<"$paragraph"
check "and does not warn of the limit the tier works at" grep -q 'No warnings' <<<"$paragraph"
"$cswapctl" --socket "$tmp/ctl.sock" set pool-limit 8M >/dev/null
check "once set, the limit is the user's" test "$(stat pool_limit_default)" = 0
done_testing
