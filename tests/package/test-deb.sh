#!/bin/bash
# shellcheck disable=SC2016,SC2317  # eval strings expand later; check calls the helpers
# cswap: the Debian package, as a user gets it.  Build-Depends names the
# package of every library meson finds, so that a clean chroot builds it
# too.  dpkg-buildpackage builds it from a copy of the source tree; each
# .deb holds exactly the files listed below, where Debian puts them;
# lintian finds neither an error nor a warning.  Unpacked into a throwaway
# root, the unit verifies against its own package's files and the plugin
# loads in nbdkit.  Installed into another (dpkg --root, scripts run
# chrootless), the service is not enabled, `systemctl enable` enables it,
# and a purge deletes the backing file named in /etc/cswap.conf,
# /var/lib/cswap and /run/cswap, but never reaches into a mount.  The
# maintainer scripts, run in a private mount namespace with systemd and
# `cswap` stubbed, start or stop nothing on install and upgrade, and a
# removal with the device up runs `cswap down` and fails, stopping
# nothing, when that does.  With $CSWAP_DEB_OUT set, the .debs are kept
# there.
set -uo pipefail
: "${CSWAP_SOURCE_ROOT:?run through meson test}" "${CSWAP_BUILD_ROOT:?}"
source "$(dirname "$0")/../lib/tap.sh"

for cmd in dpkg-buildpackage dh; do
  command -v "$cmd" >/dev/null ||
    skip "$cmd is not installed (scripts/deps installs the packaging tools)"
done

skip_check () {                 # skip_check NAME REASON
  n=$((n + 1))
  echo "ok $n - $1 # SKIP $2"
}

# comment FILE: FILE's lines as TAP comments.
comment () { sed 's/^/# /' "$1"; }

tmp=$(mktemp -d /tmp/cswap-package.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

version=$(meson introspect "$CSWAP_BUILD_ROOT" --projectinfo |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)
if command -v nbdkit >/dev/null; then
  plugindir=$(nbdkit --dump-config | sed -n 's/^plugindir=//p')
else
  plugindir=$(pkg-config --variable=plugindir nbdkit)
fi
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)

# ------------------------------------------------------------ build ----

# The tree as it is, without .git and without build directories (any
# directory holding a build.ninja).
src=$tmp/src/cswap-$version
mkdir -p "$src"
tar -C "$CSWAP_SOURCE_ROOT" --exclude=.git --exclude-tag-all=build.ninja -cf - . |
  tar -C "$src" -xf -
check "debian/changelog's version is meson's ($version)" \
  test "$(cd "$src" && dpkg-parsechangelog -SVersion)" = "$version"

# A clean build (sbuild, a fresh CI container) has only what
# Build-Depends names: each library meson finds with pkg-config must come
# from a package listed there, or the package builds here and nowhere else.
# Each line's alternatives too (systemd-dev | systemd (<< 253-2~): the
# pkg-config file of systemd is in systemd-dev from Debian 13 on).
build_depends=$(sed -n '/^Build-Depends:/,/^[^ ]/s/^ //p' "$src/debian/control" |
  tr '|' '\n' | sed -n 's/^ *\([a-z0-9][a-z0-9.+-]*\).*/\1/p')
missing=
for dep in $(meson introspect "$CSWAP_BUILD_ROOT" --dependencies |
               python3 -c 'import json, sys; print(*(d["name"] for d in json.load(sys.stdin)))'); do
  pc=$(pkg-config --path "$dep" 2>/dev/null) || continue  # threads: no .pc
  pkg=$(dpkg -S "$pc" 2>/dev/null | sed 's/[:,].*//')
  grep -qx -- "$pkg" <<<"$build_depends" || missing+=" $dep (${pkg:-no package})"
done
check "Build-Depends names the package of every pkg-config dependency${missing:+; missing:$missing}" \
  test -z "$missing"

# Source and binaries, so that lintian sees both; the README's
# `dpkg-buildpackage -b` is the binary half of this.  With the
# distribution's compiler, not the one meson test names in $CC.
start_s=$SECONDS
(cd "$src" && env -u CC -u MALLOC_PERTURB_ dpkg-buildpackage -us -uc) \
  >"$tmp/build.log" 2>&1
build_status=$?
echo "# dpkg-buildpackage took $((SECONDS - start_s)) s"
[[ $build_status -eq 0 ]] || tail -n 40 "$tmp/build.log" | comment /dev/stdin
check "dpkg-buildpackage -us -uc builds" test "$build_status" -eq 0
[[ $build_status -eq 0 ]] || done_testing

cswap_deb=$tmp/src/cswap_${version}_$arch.deb
plugin_deb=$tmp/src/nbdkit-plugin-cswap_${version}_$arch.deb
changes=$tmp/src/cswap_${version}_$arch.changes
# CSWAP_DEB_OUT (tests/trixie/test-trixie.sh): a directory that keeps the
# two packages for the Debian 13 machine (tests/trixie/test-trixie-vm.sh).
if [[ -n ${CSWAP_DEB_OUT:-} ]]; then
  check "the packages are kept in $CSWAP_DEB_OUT" cp "$cswap_deb" "$plugin_deb" "$CSWAP_DEB_OUT/"
fi

# ------------------------------------------------------- file lists ----

# files_of DEB: its files and links, one path a line, sorted.
files_of () { dpkg-deb --fsys-tarfile "$1" | tar -t | sed -n 's|^\./|/|; /[^/]$/p' | sort; }

# same_list EXPECTED ACTUAL: prints the difference.
same_list () {
  diff -u "$1" "$2" >"$tmp/diff" && return 0
  comment "$tmp/diff"
  return 1
}

sort >"$tmp/cswap.expected" <<EOF
/etc/cswap.conf
$unitdir/cswap-remote.service
$unitdir/cswap.service
/usr/sbin/cswap
/usr/sbin/cswap-connect
/usr/sbin/cswap-fuse
/usr/sbin/cswap-ublk
/usr/sbin/cswapctl
/usr/share/bash-completion/completions/cswap
/usr/share/bash-completion/completions/cswapctl
/usr/share/doc/cswap/changelog.gz
/usr/share/doc/cswap/copyright
/usr/share/lintian/overrides/cswap
/usr/share/man/man5/cswap.conf.5.gz
/usr/share/man/man8/cswap-connect.8.gz
/usr/share/man/man8/cswap-fuse.8.gz
/usr/share/man/man8/cswap-ublk.8.gz
/usr/share/man/man8/cswap.8.gz
/usr/share/man/man8/cswapctl.8.gz
EOF
sort >"$tmp/plugin.expected" <<EOF
$plugindir/nbdkit-cswap-plugin.so
/usr/share/doc/nbdkit-plugin-cswap/changelog.gz
/usr/share/doc/nbdkit-plugin-cswap/copyright
/usr/share/man/man1/nbdkit-cswap-plugin.1.gz
EOF
files_of "$cswap_deb" >"$tmp/cswap.files"
files_of "$plugin_deb" >"$tmp/plugin.files"
check "cswap_${version}_$arch.deb holds exactly its files" \
  same_list "$tmp/cswap.expected" "$tmp/cswap.files"
check "nbdkit-plugin-cswap_${version}_$arch.deb holds exactly its files" \
  same_list "$tmp/plugin.expected" "$tmp/plugin.files"
check "/etc/cswap.conf is cswap's only conffile" \
  test "$(dpkg-deb -I "$cswap_deb" conffiles)" = /etc/cswap.conf
check "nbdkit-plugin-cswap depends on nbdkit" \
  eval 'dpkg-deb -f "$plugin_deb" Depends | grep -Eq "(^|, )nbdkit(,|$| )"'

# ----------------------------------------------------------- lintian ----

if command -v lintian >/dev/null; then
  # TMPDIR: lintian leaves files there.
  TMPDIR=$tmp lintian --fail-on error,warning --pedantic --info \
    --tag-display-limit 0 "$changes" >"$tmp/lintian.out" 2>&1
  lintian_status=$?
  comment "$tmp/lintian.out"
  check "lintian: no error, no warning" test "$lintian_status" -eq 0
else
  skip_check "lintian: no error, no warning" "lintian is not installed"
fi

# ------------------------------------------------ unpacked, one each ----

root=$tmp/unpacked-cswap
dpkg-deb -x "$cswap_deb" "$root"
check "cswap --version says $version" \
  test "$("$root/usr/sbin/cswap" --version)" = "cswap $version"
# --check-config lists the merged keys, then "ok".
packaged_config_ok () {
  local out
  out=$("$root/usr/sbin/cswap-fuse" --check-config "$root/etc/cswap.conf") \
    && [[ $(tail -n 1 <<<"$out") == ok ]]
}
check "the packaged cswap-fuse accepts the packaged /etc/cswap.conf" packaged_config_ok
# What cswap(8)'s examples tell a user to read or copy is there.
examples_files_missing () {
  local path missing=
  for path in $(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$src/man/cswap.8" |
                  grep -o '/\(etc\|usr\)/[^ :,;()]*[^ :,;().]' | sed 's/\\//g'); do
    [[ -e $root$path ]] || missing+=" $path"
  done
  [[ -z $missing ]] || echo "# not in the package:$missing"
  [[ -z $missing ]]
}
check "every file cswap(8)'s EXAMPLES names is in the package" examples_files_missing
check "the helper runs the packaged daemon" \
  grep -q "^cswap_fuse=.*'/usr/sbin/cswap-fuse'" "$root/usr/sbin/cswap"
check "the helper names the packaged plugin" \
  grep -q "^nbdkit_plugin=.*'$plugindir/nbdkit-cswap-plugin.so'" "$root/usr/sbin/cswap"
if command -v systemd-analyze >/dev/null; then
  # --root: the Exec paths are looked up in the unpacked package;
  # MANPATH: so are the Documentation= man pages.
  out=$(cd / && MANPATH=$root/usr/share/man systemd-analyze verify \
          --root="$root" "$root$unitdir/cswap.service" 2>&1)
  rc=$?
  [[ -z $out ]] || comment <(echo "$out")
  check "systemd-analyze verify: the unit, with cswap's files alone" \
    test "$rc" -eq 0 -a -z "$out"
else
  skip_check "systemd-analyze verify" "systemd-analyze is not installed"
fi

proot=$tmp/unpacked-plugin
dpkg-deb -x "$plugin_deb" "$proot"
if command -v nbdkit >/dev/null; then
  nbdkit --dump-plugin "$proot$plugindir/nbdkit-cswap-plugin.so" \
    >"$tmp/dump" 2>&1
  comment "$tmp/dump"
  check "nbdkit --dump-plugin loads the packaged plugin" \
    grep -qx "cswap_version=$version" "$tmp/dump"
else
  skip_check "nbdkit --dump-plugin loads the packaged plugin" "nbdkit is not installed"
fi

# ------------------------------------------- maintainer scripts -------

if [[ $(id -u) -ne 0 ]] || ! unshare --mount true 2>/dev/null; then
  skip_check "installing, removing and purging in a throwaway root" \
    "needs root and mount namespaces"
  done_testing
fi

# dpkg_root ROOT ARGS...: dpkg on a throwaway root, its maintainer scripts
# run from here with DPKG_ROOT=ROOT, dependencies not looked for.
dpkg_root () {
  local root=$1; shift
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  touch "$root/var/lib/dpkg/status"
  dpkg --root="$root" --force-script-chrootless --force-depends \
    --log=/dev/null "$@" >>"$tmp/dpkg.log" 2>&1 || { comment "$tmp/dpkg.log"; false; }
}

root=$tmp/installed
check "dpkg --root installs both packages" \
  dpkg_root "$root" -i "$cswap_deb" "$plugin_deb"
check "dpkg registers /etc/cswap.conf as a conffile" \
  eval 'dpkg --root="$root" -s cswap | grep -q "^ /etc/cswap.conf [0-9a-f]"'
check "installing leaves cswap.service disabled" \
  test "$(systemctl --root="$root" is-enabled cswap.service 2>&1)" = disabled
check "systemctl enable cswap puts it in swap.target.wants" \
  eval 'systemctl --root="$root" enable cswap.service >/dev/null 2>&1 &&
        test -L "$root/etc/systemd/system/swap.target.wants/cswap.service"'
systemctl --root="$root" disable cswap.service >/dev/null 2>&1

# What the service leaves: a backing file outside /var/lib/cswap, its
# state, and a file beside the backing file that is not cswap's.
cat >>"$root/etc/cswap.conf" <<'EOF'
backing = /srv/cold/backing   # comment
EOF
mkdir -p "$root/srv/cold" "$root/var/lib/cswap" "$root/run/cswap/mnt"
echo pages >"$root/srv/cold/backing"
echo mine >"$root/srv/cold/other"
echo pages >"$root/var/lib/cswap/backing"
echo pid=1 >"$root/run/cswap/state"
check "dpkg --root -r cswap removes it" dpkg_root "$root" -r cswap
check "removing keeps the configuration" test -f "$root/etc/cswap.conf"
check "removing keeps the backing file" test -f "$root/srv/cold/backing"
check "dpkg --root --purge cswap purges it" dpkg_root "$root" --purge cswap
check "purging deletes /etc/cswap.conf" test ! -e "$root/etc/cswap.conf"
check "purging deletes the backing file /etc/cswap.conf named" \
  test ! -e "$root/srv/cold/backing"
check "purging keeps the file beside it" test -f "$root/srv/cold/other"
check "purging deletes /var/lib/cswap" test ! -e "$root/var/lib/cswap"
check "purging deletes /run/cswap" test ! -e "$root/run/cswap"

# A FUSE mount left by a daemon that died: the purge goes round it.
check "dpkg --root reinstalls cswap" dpkg_root "$root" -i "$cswap_deb"
mkdir -p "$root/run/cswap/mnt"
unshare --mount /bin/bash -c '
  mount -t tmpfs cswap-test "$1/run/cswap/mnt" && echo pages >"$1/run/cswap/mnt/swap" || exit 2
  dpkg --root="$1" --force-script-chrootless --force-depends --log=/dev/null \
    --purge cswap >>"$2" 2>&1 || exit 1
  test -f "$1/run/cswap/mnt/swap"' sh "$root" "$tmp/dpkg.log"
rc=$?
[[ $rc -eq 0 ]] || comment "$tmp/dpkg.log"
check "purging with a mount in /run/cswap succeeds and leaves the mount alone" \
  test "$rc" -eq 0
check "and says so" grep -q "run/cswap has a mount in it: left in place" "$tmp/dpkg.log"

# The scripts as dpkg runs them on a live systemd host, in a private mount
# namespace whose /run is empty but for /run/systemd/system (and, when
# STATE is 1, /run/cswap/state), with every command they could call to act
# on the service stubbed to note its arguments.  The cswap stub exits
# CSWAP_STATUS; deb-systemd-helper's exits $helper_status: 1 as on a host
# that never had the unit, 0 as on one where it is installed and enabled.
# Sets $rc and $out.
info=$tmp/unpacked-info
dpkg-deb -e "$cswap_deb" "$info"
stubs=$tmp/stubs
mkdir -p "$stubs"
for stub in cswap deb-systemd-invoke deb-systemd-helper systemctl; do
  cat >"$stubs/$stub" <<'EOF'
#!/bin/sh
echo "${0##*/} $*" >>"$STUB_CALLS"
case ${0##*/} in
  cswap) exit "$STUB_CSWAP_STATUS" ;;
  deb-systemd-helper) exit "$STUB_HELPER_STATUS" ;;
esac
EOF
  chmod +x "$stubs/$stub"
done
calls=$tmp/calls
run_script () {                 # run_script STATE CSWAP_STATUS SCRIPT ARG...
  local state=$1 cswap_status=$2
  shift 2
  : >"$calls"
  out=$(env -u DPKG_ROOT PATH="$stubs:$PATH" STUB_CALLS="$calls" \
          STUB_CSWAP_STATUS="$cswap_status" STUB_HELPER_STATUS="$helper_status" \
        unshare --mount /bin/sh -c '
    mount -t tmpfs cswap-test /run && mkdir -p /run/systemd/system /run/cswap || exit 125
    [ "$1" = 0 ] || echo pid=1 >/run/cswap/state
    shift
    exec "$@"' sh "$state" "$@" 2>&1)
  rc=$?
  comment <(echo "$* -> $rc"; sed 's/^/  called: /' "$calls"; echo "$out")
}
starts_nothing () { ! grep -Eq '^(deb-systemd-invoke|systemctl) .*(start|restart|stop)' "$calls"; }

helper_status=1
run_script 0 0 "$info/postinst" configure
check "postinst configure (install) starts nothing" \
  eval 'test "$rc" -eq 0 && starts_nothing'
helper_status=0
run_script 1 0 "$info/postinst" configure 0.0.1
check "postinst configure (upgrade) leaves a running device alone" \
  eval 'test "$rc" -eq 0 && starts_nothing'
if [[ -e $info/preinst ]]; then
  run_script 1 0 "$info/preinst" upgrade "$version"
else
  rc=0
  : >"$calls"
fi
check "preinst upgrade (if any) leaves a running device alone" \
  eval 'test "$rc" -eq 0 && starts_nothing'
run_script 1 0 "$info/prerm" upgrade "$version"
check "prerm upgrade leaves a running device alone" \
  eval 'test "$rc" -eq 0 && test ! -s "$calls"'
run_script 1 0 "$info/prerm" remove
check "prerm remove with the device up: cswap down, then the service stops" \
  eval 'test "$rc" -eq 0 && test "$(cat "$calls")" = "cswap down
deb-systemd-invoke stop cswap-remote.service cswap.service"'
run_script 1 4 "$info/prerm" remove
check "prerm remove fails when cswap down refuses (swapoff failed)" \
  test "$rc" -ne 0
check "and stops nothing" test "$(cat "$calls")" = "cswap down"
check "and says the device is still up" \
  grep -q "swap device is still up" <<<"$out"
run_script 0 0 "$info/prerm" remove
check "prerm remove with no device: the service stops, cswap down is not run" \
  test "$rc" -eq 0 -a "$(cat "$calls")" = "deb-systemd-invoke stop cswap-remote.service cswap.service"

done_testing
