#!/bin/bash
# cswap on Debian 13 (trixie), with trixie's own compiler and libraries
# (gcc 14, meson 1.7, nbdkit 1.42, libfuse 3.17, liburing 2.9), in a
# chroot into the root tests/trixie/make-root makes (cached; made on the
# first run): a copy of the source tree configures with --werror and
# builds, and its tests that need no machine-wide state pass there (but
# the allocator's, below): the unit suites, the codecs' (lz4, zstd), the
# store's and the tier's (liburing), the daemons' own (FUSE and nbdkit,
# against trixie's libfuse and nbdkit) and the Debian package's
# (dpkg-buildpackage, then trixie's lintian finds neither an error nor a
# warning: tests/package/test-deb.sh).  Each test in the root is one
# check here, its failed checks and last lines as comments.  The packages
# are kept in the build tree's trixie-debs/, with the tree's key
# (tests/trixie/source-key), for tests/trixie/test-trixie-vm.sh.
#
# The chroot runs in a mount and PID namespace of its own: /proc, /sys,
# /dev, the corpus and a scratch directory are mounted there, so that
# they, and any process a test leaves, end with the test.  The root
# itself is not written to: the tree, its build and the package are in
# the scratch directory (the root's /tmp), deleted on exit.
#
# Skips (77) without root, or where the root is not cached and cannot be
# made (no debootstrap, Debian's archive unreachable).
set -uo pipefail
: "${CSWAP_SOURCE_ROOT:?run through meson test}" "${CSWAP_BUILD_ROOT:?}"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/tap.sh"

# The suites run in the root: not those that change machine-wide state
# (machine), nor the VM test bed's, nor this one; nor the allocator's,
# whose subject is cswap's own C over mmap(2) alone: what trixie changes
# for it is the compiler, which builds it here with --werror, and the
# allocator gcc 14 built then runs under every test of the store, the
# daemons and the package here, while its own random model and
# concurrency tests (about 45 s of this test's CPU) run on the host's
# three builds, under ASan+UBSan and TSan too (scripts/test).
# CSWAP_TRIXIE_SUITES (names, space-separated) runs another list, with
# allocator for all.
# shellcheck disable=SC2206  # split on purpose
suites=(${CSWAP_TRIXIE_SUITES:-common compress store tier control daemon remote service package})

if [[ -z ${CSWAP_TRIXIE_NAMESPACE:-} ]]; then
  [[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, chroot, mounts)"
  unshare --mount --pid true 2>/dev/null || skip "needs mount and PID namespaces"
  root_s=$SECONDS
  made=$("$here/make-root" 2>"${TMPDIR:-/tmp}/cswap-make-root.$$")
  rc=$?
  message=$(cat "${TMPDIR:-/tmp}/cswap-make-root.$$"); rm -f "${TMPDIR:-/tmp}/cswap-make-root.$$"
  [[ $rc -ne 77 ]] || skip "the Debian 13 root: ${message#make-root: }"
  [[ -z $message ]] || sed 's/^/# /' <<<"$message"
  echo "# the Debian 13 root: $((SECONDS - root_s)) s (${made:-not made})"
  if [[ $rc -ne 0 ]]; then
    echo "not ok 1 - tests/trixie/make-root makes the Debian 13 root"
    echo "1..1"
    exit 1
  fi
  # The scratch directory is named after this process (unshare, once
  # exec'ed): those of a killed run, whose process is gone, are deleted.
  for old in /var/tmp/cswap-trixie.*.*; do
    pid=${old#/var/tmp/cswap-trixie.}
    [[ ! -d $old ]] || kill -0 "${pid%%.*}" 2>/dev/null || rm -rf --one-file-system "$old"
  done
  scratch=$(mktemp -d /var/tmp/cswap-trixie.$$.XXXXXX)
  # Everything else in namespaces of its own; --kill-child: a killed
  # test takes every process in the root with it.
  exec unshare --mount --pid --fork --kill-child --propagation private \
    env CSWAP_TRIXIE_NAMESPACE="$made" CSWAP_TRIXIE_SCRATCH="$scratch" "$0" "$@"
fi
root=$CSWAP_TRIXIE_NAMESPACE
scratch=$CSWAP_TRIXIE_SCRATCH
echo "ok 1 - tests/trixie/make-root makes the Debian 13 root ($root)"
n=1

# The mounts go with the namespace; unmounted here first all the same.
trap 'umount -R "$root" 2>/dev/null
      rm -rf --one-file-system "$scratch"' EXIT
# The root a mount point of its own, so that a test in it can make a
# mount namespace too (unshare's --propagation needs / to be a mount).
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=755 run "$root/run"
# The host's locks: tests/lib/enable-uring.sh's, around a module
# parameter the host's tests switch too.
mkdir -p "$root/run/lock"
mount --bind /run/lock "$root/run/lock"
mount --bind "$scratch" "$root/tmp"
chmod 1777 "$scratch"
corpus_dir=$(dirname "${CSWAP_CORPUS:-/nonexistent}")
mkdir -p "$root/corpus"
if [[ -d $corpus_dir ]]; then
  mount --bind -o ro "$corpus_dir" "$root/corpus"
fi
corpus=/corpus/$(basename "${CSWAP_CORPUS:-anon-pages.zst}")

# in_root COMMAND: runs the shell command in the root, with the root's
# own PATH and no environment from meson test's but the sanitizers'.
in_root () {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LC_ALL=C.UTF-8 TMPDIR=/tmp /bin/bash -c "$1"
}

# comment FILE: FILE's lines as TAP comments.
comment () { sed 's/^/# /' "$1"; }

version_of () { in_root "dpkg-query -W -f '\${Version}' $1"; }
echo "# trixie: gcc $(version_of gcc-14), meson $(version_of meson)," \
  "nbdkit $(version_of nbdkit), libfuse3 $(version_of libfuse3-4)," \
  "liburing $(version_of liburing2), lintian $(version_of lintian)"

# The tree as it is, without .git and build directories, as test-deb.sh
# copies it, and its key, which marks the packages kept below.
source_key=$("$here/source-key" "$CSWAP_SOURCE_ROOT")
mkdir -p "$scratch/src" "$scratch/debs"
tar -C "$CSWAP_SOURCE_ROOT" --exclude=.git --exclude-tag-all=build.ninja -cf - . |
  tar -C "$scratch/src" -xf -

step_s=$SECONDS
in_root "meson setup /tmp/build /tmp/src --werror -Dcorpus=$corpus" >"$scratch/setup.log" 2>&1
rc=$?
[[ $rc -eq 0 ]] || tail -n 30 "$scratch/setup.log" | comment /dev/stdin
check "meson setup --werror configures" test "$rc" -eq 0
[[ $rc -eq 0 ]] || done_testing
grep -B2 -A3 'WARNING\|DEPRECATION' "$scratch/setup.log" >"$scratch/setup.warnings"
comment "$scratch/setup.warnings"
check "meson setup warns of nothing" test ! -s "$scratch/setup.warnings"

in_root "ninja -C /tmp/build" >"$scratch/ninja.log" 2>&1
rc=$?
[[ $rc -eq 0 ]] || grep -A12 'error\|warning' "$scratch/ninja.log" | head -n 80 | comment /dev/stdin
check "ninja builds with gcc 14, warnings being errors" test "$rc" -eq 0
echo "# configure and build: $((SECONDS - step_s)) s"
[[ $rc -eq 0 ]] || done_testing

step_s=$SECONDS
suite_args=
for suite in "${suites[@]}"; do suite_args+=" --suite $suite"; done
in_root "CSWAP_DEB_OUT=/tmp/debs meson test -C /tmp/build --no-rebuild --num-processes 2 \
           $suite_args --no-suite machine --no-suite vm --no-suite trixie" \
  >"$scratch/test.log" 2>&1
echo "# meson test: $((SECONDS - step_s)) s"
# The packages the package test built (CSWAP_DEB_OUT), kept in the build
# tree for the Debian 13 machine (test-trixie-vm.sh) with the key of the
# tree they come from; none when that test did not build them.
debs=$CSWAP_BUILD_ROOT/trixie-debs
rm -rf "$debs"
if compgen -G "$scratch/debs/*.deb" >/dev/null; then
  mkdir -p "$debs" && cp "$scratch"/debs/*.deb "$debs/" && echo "$source_key" >"$debs/source-key"
fi
grep -A8 '^Ok:' "$scratch/test.log" | comment /dev/stdin

# One check a test in the root, from meson's own log, with its time (what
# to look at when this test grows): a failed one's output, but its passed
# checks, as comments.
log=$scratch/build/meson-logs/testlog.json
if [[ ! -s $log ]]; then
  tail -n 30 "$scratch/test.log" | comment /dev/stdin
  check "meson test ran in the root" false
  done_testing
fi
while IFS=$'\t' read -r result name seconds; do
  if [[ $result == '#' ]]; then
    echo "# $name${seconds:+$'\t'$seconds}"
    continue
  fi
  n=$((n + 1))
  case $result in
    OK|EXPECTEDFAIL) echo "ok $n - trixie: $name ($seconds s)" ;;
    SKIP) echo "ok $n - trixie: $name # SKIP in the root" ;;
    *) echo "not ok $n - trixie: $name ($result, $seconds s)"; status=1 ;;
  esac
done < <(python3 - "$log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    test = json.loads(line)
    print(f"{test['result']}\t{test['name']}\t{test['duration']:.0f}")
    if test["result"] not in ("OK", "EXPECTEDFAIL", "SKIP"):
        # Its output but the passed checks: the failed ones and the
        # comments around them (lintian's tags, a build's errors).
        lines = [l for l in (test.get("stdout") or "").splitlines()
                 if not l.startswith("ok ")]
        for l in lines[:150] + (["..."] if len(lines) > 150 else []):
            print(f"#\t{l}")
PY
)
done_testing
