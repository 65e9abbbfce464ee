#!/bin/bash
# shellcheck disable=SC2016,SC2001  # eval and --run strings expand later, on purpose
# cswap: `meson install --destdir` puts every file where it belongs (the
# bash completion where bash-completion's pkg-config file says), the
# installed plugin loads in nbdkit, the installed helper and example
# configuration work, and `systemd-analyze verify` accepts the unit
# against the installed tree (its Exec paths and its man pages).
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/sanitizer-env.sh"
command -v jq >/dev/null || { echo "1..0 # SKIP jq is not installed"; exit 0; }

n=0 failed=0
check () {                      # check NAME COMMAND…
  local name=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $name"
  else failed=$((failed + 1)); echo "not ok $n - $name"; fi
}

dest=$(mktemp -d /tmp/cswap-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT

option () {
  meson introspect "$CSWAP_BUILD_ROOT" --buildoptions \
    | jq -r --arg k "$1" '.[] | select(.name == $k) | .value'
}
prefix=$(option prefix)
sbindir=$prefix/$(option sbindir)
sysconfdir=$(option sysconfdir)
[[ $sysconfdir == /* ]] || sysconfdir=$prefix/$sysconfdir
mandir=$prefix/$(option mandir)
plugindir=$(pkg-config --variable=plugindir nbdkit)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null) \
  || unitdir=$prefix/lib/systemd/system
version=$(meson introspect "$CSWAP_BUILD_ROOT" --projectinfo | jq -r .version)
datadir=$prefix/$(option datadir)
completionsdir=$(pkg-config --define-variable=datadir="$datadir" \
                   --variable=completionsdir bash-completion 2>/dev/null) \
  || completionsdir=$datadir/bash-completion/completions

check "meson install --destdir" \
  eval 'meson install -C "$CSWAP_BUILD_ROOT" --destdir "$dest" --no-rebuild >"$dest.log" 2>&1 || { sed "s/^/# /" "$dest.log"; false; }'
rm -f "$dest.log"

for file in "$sbindir/cswap" "$sbindir/cswap-fuse" "$sbindir/cswap-ublk" "$sbindir/cswapctl" "$sbindir/cswap-connect" \
            "$plugindir/nbdkit-cswap-plugin.so" "$unitdir/cswap.service" \
            "$unitdir/cswap-remote.service" \
            "$sysconfdir/cswap.conf.example" \
            "$mandir/man1/nbdkit-cswap-plugin.1" "$mandir/man8/cswap.8" \
            "$mandir/man8/cswap-fuse.8" "$mandir/man5/cswap.conf.5" "$mandir/man8/cswap-connect.8" \
            "$mandir/man8/cswap-ublk.8" \
            "$completionsdir/cswapctl" "$completionsdir/cswap"; do
  check "installed $file" test -f "$dest$file"
done
for prog in cswap cswap-fuse cswap-ublk cswapctl cswap-connect; do
  check "$prog is executable" test -x "$dest$sbindir/$prog"
done
check "no cswap.conf installed, only the example" \
  test ! -e "$dest$sysconfdir/cswap.conf"

helper=$dest$sbindir/cswap
check "the helper has every @VARIABLE@ substituted" \
  eval '! grep -n "@[A-Z_]*@" "$helper"'
check "the helper names the installed cswap-fuse" \
  grep -q "^cswap_fuse=.*'$sbindir/cswap-fuse'" "$helper"
check "the helper names the installed cswap-ublk" \
  grep -q "^cswap_ublk=.*'$sbindir/cswap-ublk'" "$helper"
check "the helper names the installed cswap-connect" \
  grep -q "^cswap_connect=.*'$sbindir/cswap-connect'" "$helper"
check "cswap --version says $version" \
  eval '[[ $("$helper" --version) == "cswap $version" ]]'
check "cswap with no command is a usage error (2)" \
  eval '"$helper" >/dev/null 2>&1; [[ $? -eq 2 ]]'

# The test seams are in the test programs only (doc/design.md, "Test
# seams"): no installed program reads a fault variable.  The test build
# cswap-fuse-faults does, which shows the strings would be found.
fault_switches='CSWAP_TIER_FAULT|CSWAP_FUSE_URING_FAULT'
for file in "$sbindir/cswap-fuse" "$plugindir/nbdkit-cswap-plugin.so"; do
  check "installed ${file##*/} has no fault switch" \
    eval '! strings "$dest$file" | grep -Eq "$fault_switches"'
done
check "the test build cswap-fuse-faults has both fault switches" \
  eval '[[ $(strings "$CSWAP_BUILD_ROOT/daemon/cswap-fuse-faults" |
             grep -Eo "$fault_switches" | sort -u | wc -l) -eq 2 ]]'

# The plugin exports what nbdkit looks up, plugin_init, and nothing else
# (-fvisibility=hidden and --exclude-libs, daemon/meson.build).
exports=$(nm -D --defined-only "$dest$plugindir/nbdkit-cswap-plugin.so" |
            awk '{ print $NF }' | tr '\n' ' ')
check "the installed plugin exports only plugin_init (nm -D: ${exports% })" \
  test "$exports" = "plugin_init "

# bash-completion sources a command's file alone: cswapctl's must find the
# helpers in cswap's, beside it.
check "the installed cswapctl completion loads on its own" \
  bash -c 'source "$1" && complete -p cswapctl >/dev/null &&
           declare -F _cswap_reply >/dev/null' _ "$dest$completionsdir/cswapctl"

unit=$dest$unitdir/cswap.service
check "the unit runs $sbindir/cswap" \
  grep -q "^ExecStart=$sbindir/cswap run\$" "$unit"
check "the unit is Type=notify" grep -q '^Type=notify$' "$unit"
remote_unit=$dest$unitdir/cswap-remote.service
check "cswap-remote.service runs $sbindir/cswap remote-up" \
  grep -q "^ExecStart=$sbindir/cswap remote-up\$" "$remote_unit"
check "and stops with remote-down" \
  grep -q "^ExecStop=$sbindir/cswap --timeout 0 remote-down\$" "$remote_unit"

check "the example configuration passes the installed cswap-fuse --check-config" \
  eval '[[ $("$dest$sbindir/cswap-fuse" --check-config "$dest$sysconfdir/cswap.conf.example" | tail -n 1) == ok ]]'
check "cswap check accepts the example configuration" \
  eval 'CSWAP_FUSE="$dest$sbindir/cswap-fuse" CSWAP_BACKING_DIR="$dest/var/lib/cswap" "$helper" -c "$dest$sysconfdir/cswap.conf.example" check >/dev/null'

if command -v nbdkit >/dev/null; then
  dump=$(nbdkit --dump-plugin "$dest$plugindir/nbdkit-cswap-plugin.so" 2>&1)
  check "nbdkit --dump-plugin loads the installed plugin" \
    grep -q "^cswap_version=$version\$" <<<"$dump"
  check "the installed plugin reads config=FILE" \
    nbdkit -U - "$dest$plugindir/nbdkit-cswap-plugin.so" \
      "config=$dest$sysconfdir/cswap.conf.example" ctl=none --run true
fi

if command -v systemd-analyze >/dev/null; then
  # --root: Exec paths are looked up in the installed tree; MANPATH: so
  # are the Documentation= man pages.  Without the sanitizer preload,
  # which man(1) does not survive.
  for u in "$unit" "$remote_unit"; do
    out=$(cd / && MANPATH=$dest$mandir env -u LD_PRELOAD systemd-analyze verify --root="$dest" \
          "$u" 2>&1)
    status=$?
    check "systemd-analyze verify ${u##*/}" test "$status" -eq 0 -a -z "$out"
    [[ -z $out ]] || sed 's/^/# /' <<<"$out"
  done
  # And that it would notice: a unit whose helper is missing fails.
  mv "$helper" "$helper.moved"
  check "systemd-analyze verify notices a missing ExecStart binary" \
    eval '! (cd / && env -u LD_PRELOAD systemd-analyze verify --man=no --root="$dest" "$unit" >/dev/null 2>&1)'
  mv "$helper.moved" "$helper"
fi

echo "1..$n"
[[ $failed -eq 0 ]]
