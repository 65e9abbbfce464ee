#!/bin/bash
# cswap: which mapped files the daemon locks whole (lock-memory=yes).
# Code first run under pressure must not be read in from disk then, so
# the daemon's text and the libraries on its I/O path are locked whole
# (libc, libzstd).  Libraries it maps but never calls once serving are
# not locked at all, not even the pages loading touched: libgcrypt and
# liblzma (libsystemd's) always, libcrypto unless the backing file's
# records are sealed.  libsystemd, called only off the I/O path, keeps
# locked what it touched (MCL_ONFAULT).  Memory a 160 MiB machine did not
# have (doc/design.md, "The smallest machine").  Under nbdkit, GnuTLS and
# the libraries only it uses (4 MiB) are locked whole unless nbdkit runs
# --tls=off, as `cswap up` starts it.  What is unlocked is file pages
# only: every anonymous page stays locked, those of the libraries left
# unlocked too (their relocated data, .dynamic, which ld.so reads on every
# symbol lookup), since only swap, the daemon's own device maybe, could
# take it (doc/design.md, "ublk": a queue thread deadlocked on one).
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
# AddressSanitizer's mlock() returns 0 and locks nothing.
if [[ ${CSWAP_SANITIZE:-none} == *address* ]]; then
  echo "ok 1 - libraries locked whole # SKIP AddressSanitizer's mlock() locks nothing"
  echo "1..1"
  exit 0
fi
source "$(dirname "$0")/../lib/fuse-daemon.sh"
source "$(dirname "$0")/../lib/smaps.sh"

# locking HOW PID LIBRARY: LIBRARY's text in PID is locked as HOW says
# (smaps_text_locking: whole, on-fault, unlocked or absent; smaps'
# Locked: is a proportional share, small for a library others map too).
locking () {
  local got; got=$(smaps_text_locking "$2" "$3")
  echo "# $3: $got"
  [[ " $1 " == *" $got "* ]]
}
# whole PID LIBRARY: its text is mapped, locked by mlock (VmFlags lo, not
# lf) and all resident.
whole () { locking whole "$@"; }
# partly PID LIBRARY: only locked as it faults in (mlockall's MCL_ONFAULT).
partly () { locking on-fault "$@"; }
# unlocked PID LIBRARY: mapped and not locked at all.
unlocked () { locking unlocked "$@"; }
# absent_or_unlocked PID LIBRARY: not mapped (a libsystemd built without
# libgcrypt), or not locked at all.
absent_or_unlocked () { locking "absent unlocked" "$@"; }
# anonymous_locked PID: no mapping of PID that holds anonymous pages, or
# could, is unlocked.
anonymous_locked () {
  local unlocked_list; unlocked_list=$(smaps_unlocked_private "$1")
  [[ -z $unlocked_list ]] && return 0
  sed 's/^/# unlocked (anonymous kB, in swap kB, permissions, file): /' <<<"$unlocked_list"
  return 1
}

start_fuse plain --size 64M -o lock-memory=yes
check "no backing file: libc's text is locked whole" whole "$pid" libc.so
check "no backing file: libzstd's text is locked whole" whole "$pid" libzstd.so
check "no backing file: libcrypto is not locked at all" unlocked "$pid" libcrypto.so
check "libgcrypt is not locked at all" absent_or_unlocked "$pid" libgcrypt.so
check "liblzma is not locked at all" absent_or_unlocked "$pid" liblzma.so
check "libsystemd keeps locked what it touched" partly "$pid" libsystemd.so
check "no backing file: every anonymous page is locked, the unlocked libraries' too" \
  anonymous_locked "$pid"

start_fuse sealed --size 64M -o lock-memory=yes -o "backing=$tmp/backing" \
  -o backing-size=64M -o backing-encrypt=yes
check "sealed backing file: libcrypto's text is locked whole" whole "$pid" libcrypto.so
check "sealed backing file: libc's text is locked whole" whole "$pid" libc.so
check "sealed backing file: every anonymous page is locked" \
  anonymous_locked "$pid"

start_fuse clear --size 64M -o lock-memory=yes -o "backing=$tmp/clear" \
  -o backing-size=64M -o backing-encrypt=no
check "backing file in the clear: libcrypto is not locked at all" \
  unlocked "$pid" libcrypto.so
check "backing file in the clear: every anonymous page is locked" \
  anonymous_locked "$pid"

# start_nbdkit NAME NBDKIT-OPTION…: nbdkit cswap with lock-memory=yes,
# started once it answers `stats`; sets pid (stopped by the EXIT trap).
start_nbdkit () {
  local name=$1
  shift
  nbdkit --foreground --exit-with-parent "$@" --unix "$tmp/$name.nbd" \
    "$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so" size=64M \
    lock-memory=yes ctl="$tmp/$name.sock" 2>"$tmp/$name.log" &
  pid=$!
  fuse_pids+=("$pid")
  await_daemon nbdkit "$name" true
}

if command -v nbdkit >/dev/null; then
  source "$(dirname "$0")/../lib/sanitizer-env.sh"
  start_nbdkit tls-default
  check "nbdkit, TLS as nbdkit decides: libgnutls's text is locked whole" \
    whole "$pid" libgnutls.so
  check "nbdkit: libc's text is locked whole" whole "$pid" libc.so
  check "nbdkit: the plugin's text is locked whole" \
    whole "$pid" nbdkit-cswap-plugin.so
  check "nbdkit: every anonymous page is locked" anonymous_locked "$pid"
  start_nbdkit tls-off --tls off
  check "nbdkit --tls off: libgnutls is not locked at all" \
    unlocked "$pid" libgnutls.so
  check "nbdkit --tls off: libunistring is not locked at all" \
    unlocked "$pid" libunistring.so
  check "nbdkit --tls off: libc's text is still locked whole" \
    whole "$pid" libc.so
  check "nbdkit --tls off: every anonymous page is locked, GnuTLS's too" \
    anonymous_locked "$pid"
else
  n=$((n + 1))
  echo "ok $n - nbdkit's libraries # SKIP nbdkit is not installed"
fi
done_testing
