#!/bin/bash
# cswap: the nbdkit plugin's exports (export=NAME[:LIMIT], nbd-exports.h):
# listed, refused when not configured, one device each with its own
# writer, a quota that refuses with ENOSPC and leaves the others alone,
# pages intact across reconnection; cswapctl's view; exports made from
# a template, four clients racing for one name; junk names that do not
# use the template's areas up, and names it refuses; the same over
# TLS-PSK, refusing a client without TLS, with an unknown user or the
# wrong key; a client's requests failing, not hanging, once the server
# is killed; an export dropped by command (never while open) and by
# export-idle-drop=; export-list=no listing none and serving no default,
# and keeping the names out of the log, the metrics and cswapctl;
# and the bad forms of the keys refused with a clear message.
set -uo pipefail
source "$(dirname "$0")/../lib/plugin-env.sh"

work=$(mktemp -d)
tls_server=
trap '[[ -n $tls_server ]] && kill -KILL "$tls_server" 2>/dev/null; rm -rf "$work"' EXIT
exports=(size=8M export=alpha export=beta export=gamma:256K ctl=none)
client="/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-exports.py"
status=0
n=0

# Runs one client pass, renumbering its TAP lines after the ones so far.
run_client () {
  local out
  out=$("$@" 2> "$work/log") || status=1
  while IFS= read -r line; do
    if [[ $line =~ ^(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
      n=$((n + 1))
      echo "${BASH_REMATCH[1]}ok $n - ${BASH_REMATCH[2]}"
    else
      echo "$line"
    fi
  done <<< "$out"
  grep -i 'quota\|error' "$work/log" | sed 's/^/# /'
}

# The first pass also leaves cswapctl's view of the exports behind.
ctl="$CSWAP_BUILD_ROOT/control/cswapctl -s $work/ctl.sock"
run_client nbdkit -U - "$CSWAP_PLUGIN" "${exports[@]/#ctl=none/ctl=$work/ctl.sock}" \
  --run "$client \"\$unixsocket\" $CSWAP_CORPUS; r=\$?;
         $ctl --json exports > $work/exports.json; $ctl exports gamma > $work/gamma.txt;
         $ctl --json stats > $work/stats.json; $ctl metrics > $work/metrics.txt;
         $ctl exports delta 2> $work/delta.txt; echo \$? > $work/delta.rc; exit \$r"
n=$((n + 1))
if /usr/bin/python3 - "$work/stats.json" "$work/metrics.txt" "$work/exports.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
refused = sum(x["quota_refusals"] for x in json.load(open(sys.argv[3]))["exports"])
assert s["exports"] == 3 and s["export_quota_refusals"] == refused > 0, s
assert s["size_bytes"] == 3 * (8 << 20), s["size_bytes"]
metrics = open(sys.argv[2]).read()
assert f"cswap_export_quota_refusals_total {refused}" in metrics, metrics
assert "cswap_exports 3" in metrics
PY
then
  echo "ok $n - cswapctl stats and metrics: the store of three exports, with their count and quota refusals"
else
  echo "not ok $n - cswapctl stats and metrics: the store of three exports, with their count and quota refusals"
  status=1
fi
n=$((n + 1))
if /usr/bin/python3 - "$work/metrics.txt" "$work/exports.json" <<'PY'
import json, re, sys
metrics = open(sys.argv[1]).read()
series = {}
for m in re.finditer(r'^cswap_export_(\w+)\{export="([^"]*)"\} (\d+)$', metrics, re.M):
    series[(m[1], m[2])] = int(m[3])
for e in json.load(open(sys.argv[2]))["exports"]:
    for metric, member in [("pages_stored", "pages_stored"),
                           ("compressed_bytes", "compressed_bytes"),
                           ("limit_bytes", "limit_bytes"),
                           ("writes_total", "writes"),
                           ("quota_refusals_total", "quota_refusals"),
                           ("clients", "clients")]:
        assert series[(metric, e["name"])] == e[member], (metric, e, series)
assert "# TYPE cswap_export_writes_total counter" in metrics
assert series[("quota_refusals_total", "gamma")] > 0
PY
then
  echo "ok $n - cswapctl metrics: each export's numbers, labelled with its name, equal cswapctl exports'"
else
  echo "not ok $n - cswapctl metrics: each export's numbers, labelled with its name"
  status=1
fi
n=$((n + 1))
if /usr/bin/python3 - "$work/exports.json" <<'PY'
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))["exports"]}
assert list(e) == ["alpha", "beta", "gamma"], e
assert e["gamma"]["limit_bytes"] == 256 << 10 and e["alpha"]["limit_bytes"] == 0
assert e["gamma"]["failed_writes"] == e["gamma"]["quota_refusals"] > 0
assert e["gamma"]["compressed_bytes"] <= (256 << 10) + 4096
assert e["alpha"]["failed_writes"] == 0 and e["alpha"]["writes"] >= 1500 * 0.9
assert all(x["size_bytes"] == 8 << 20 for x in e.values())
PY
then
  echo "ok $n - cswapctl exports: three rows, gamma's refusals are its quota's and it holds no more than its quota"
else
  echo "not ok $n - cswapctl exports: three rows, gamma's refusals are its quota's"
  status=1
fi
sed 's/^/# /' "$work/gamma.txt"
n=$((n + 1))
if [[ $(cat "$work/delta.rc") == 1 ]] && grep -q "no export named delta" "$work/delta.txt" \
    && grep -q "^gamma .*256K" "$work/gamma.txt"; then
  echo "ok $n - cswapctl exports NAME: one row; an unknown name is an error (exit 1)"
else
  echo "not ok $n - cswapctl exports NAME: one row; an unknown name is an error (exit 1)"
  status=1
fi

# TLS-PSK: nbdkit's own option; the key file is username:hex-key.
psk_key () { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
printf 'alice:%s\n' "$(psk_key)" > "$work/keys.psk"
printf 'alice:%s\n' "$(psk_key)" > "$work/wrong.psk"
# Served in the foreground, not with --run, and ended with SIGKILL:
# under AddressSanitizer a TLS nbdkit deadlocks at exit in p11-kit's
# destructor (gnutls loads it; freelocale waits on a lock), in the
# process forked for --run and in the server itself, so its exit is not
# what this pass checks.
nbdkit -f -U "$work/tls.sock" -P "$work/tls.pid" --tls=require \
  --tls-psk="$work/keys.psk" "$CSWAP_PLUGIN" "${exports[@]}" 2> "$work/tls.log" &
tls_server=$!
for _ in $(seq 100); do [[ -S $work/tls.sock ]] && break; sleep 0.1; done
# shellcheck disable=SC2086  # $client is the interpreter and the script
run_client $client "$work/tls.sock" "$CSWAP_CORPUS" "$work/keys.psk" "$work/wrong.psk"
kill -KILL "$tls_server"
wait "$tls_server" 2>/dev/null
tls_server=

# Exports made from a template, their quota export-limit's.
run_client nbdkit -U - "$CSWAP_PLUGIN" size=4M export=alpha \
  'export-template=client-*' export-template-count=3 export-limit=128K ctl=none \
  --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-export-template.py \"\$unixsocket\""

# What a claim from the template costs: junk names do not use the areas
# up, a dropped empty export's area is taken again, bad names refused.
run_client nbdkit -U - "$CSWAP_PLUGIN" size=4M 'export-template=t-*' \
  export-template-count=2 export-idle-drop=1 ctl="$work/claims.sock" \
  --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-export-claims.py \
         \"\$unixsocket\" $work/claims.sock $CSWAP_BUILD_ROOT/control/cswapctl"
cp "$work/log" "$work/claims.log"
n=$((n + 1))
if grep -q "may hold no space or control character" "$work/claims.log"; then
  echo "ok $n - the log says why a name with a space or a control character is refused"
else
  echo "not ok $n - the log says why a name with a space or a control character is refused"
  sed 's/^/# /' "$work/claims.log"
  status=1
fi

# Dropping an export: by command, never while open, and once idle.
run_client nbdkit -U - "$CSWAP_PLUGIN" size=4M export=alpha export=beta \
  'export=q"uo\te' export-idle-drop=2 ctl="$work/drop.sock" \
  --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-export-drop.py \
         \"\$unixsocket\" $work/drop.sock $CSWAP_BUILD_ROOT/control/cswapctl"

# export-list=no: the names are secrets, none listed, no default.
secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
run_client nbdkit -U - "$CSWAP_PLUGIN" size=4M "export=$secret" "export=other-$secret" \
  'export-template=t-*' export-list=no ctl=none \
  --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-export-unlisted.py \"\$unixsocket\" $secret"

# export-list=no: no name in the log, the metrics or cswapctl exports,
# which shows ids; the admin still names an export, or its id, to drop it.
names=()
for _ in 1 2 3 4; do names+=("$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"); done
mkdir "$work/secrets"
run_client nbdkit -U - "$CSWAP_PLUGIN" size=4M "export=${names[0]}:128K" \
  "export=${names[1]}" 'export-template=t-*' export-limit=128K export-idle-drop=1 \
  export-list=no ctl="$work/secrets.sock" \
  --run "/usr/bin/python3 $CSWAP_SOURCE_ROOT/tests/daemon/nbd-export-secrets.py \
         \"\$unixsocket\" $work/secrets.sock $CSWAP_BUILD_ROOT/control/cswapctl \
         $work/secrets ${names[0]} ${names[1]} t-${names[2]} t-${names[3]}"
cp "$work/log" "$work/secrets/log"
for what in log metrics exports exports.json; do
  n=$((n + 1))
  leaked=$(grep -c -F -e "${names[0]}" -e "${names[1]}" -e "${names[2]}" \
             -e "${names[3]}" -e "${names[0]%?}" "$work/secrets/$what")
  lines=$(grep -c '#[0-9a-f]\{16\}' "$work/secrets/$what")
  if [[ $leaked == 0 && $lines -gt 0 ]]; then
    echo "ok $n - export-list=no: $what names no export, $lines lines give ids"
  else
    echo "not ok $n - export-list=no: $what names no export ($leaked lines do), $lines lines give ids"
    sed 's/^/# /' "$work/secrets/$what" | head -40
    status=1
  fi
done

# The server dies under a connected client: errors, not a hang.
run_client /usr/bin/python3 "$CSWAP_SOURCE_ROOT/tests/daemon/nbd-server-death.py" \
  "$CSWAP_PLUGIN" "$work"

# Bad forms: nbdkit stops before serving, and says why.
refuses () {
  local expect=$1
  shift
  n=$((n + 1))
  if ! nbdkit -U - "$CSWAP_PLUGIN" size=8M ctl=none "$@" --run true \
      2> "$work/log" && grep -q -- "$expect" "$work/log"; then
    echo "ok $n - $* refused: $(grep -m1 -- "$expect" "$work/log")"
  else
    echo "not ok $n - $* refused, saying \"$expect\""
    sed 's/^/# /' "$work/log"
    status=1
  fi
}
refuses "a name of 1 to 4096 bytes" export=
refuses "a name of 1 to 4096 bytes" export=:1M
refuses "named twice" export=a export=a
refuses "export=a:1X" export=a:1X
refuses "export-limit=lots" export=a export-limit=lots
refuses "export-limit=4095" export=a export-limit=4095
refuses "a pattern" export-template=
refuses "export-template-count=0" 'export-template=c*' export-template-count=0
refuses "export-template-count=4097" 'export-template=c*' export-template-count=4097
refuses "without export-template=" export-template-count=4
refuses "export-idle-drop=soon" export=a export-idle-drop=soon
refuses "export-idle-drop=-1" export=a export-idle-drop=-1
refuses "export-idle-drop=31622401" export=a export-idle-drop=31622401
refuses "export-list=maybe: use yes or no" export=a export-list=maybe
refuses "one device under any name has no name to keep secret" export-list=no
refuses "more than the 4096 exports" export=a 'export-template=c*' export-template-count=4096
refuses "more than the" size=1T export=a export=b export=c export=d \
  export=e export=f export=g export=h export=i
echo "1..$n"
exit $status
