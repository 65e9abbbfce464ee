#!/bin/bash
# cswap: the backing file's key stays locked in memory once the daemon has
# gone into the background (issue 27).  The key's page is locked when the
# store is made, before the front end forks, and a child of fork() does
# not inherit memory locks: with lock-memory=no (or a failed mlockall)
# the key could be swapped out.  Both front ends, daemonized, with a
# sealed backing file and lock-memory=no: the key's page (its own
# anonymous 4 KiB mapping, left out of core dumps: VmFlags dd, and not
# MAP_NORESERVE like the pool's) must be locked.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
# AddressSanitizer's mlock() returns 0 and locks nothing: a skipped check,
# not a skipped test, which meson would count as an error (exit 77).
if [[ ${CSWAP_SANITIZE:-none} == *address* ]]; then
  echo "ok 1 - the key's page is locked # SKIP AddressSanitizer's mlock() locks nothing"
  echo "1..1"
  exit 0
fi
source "$(dirname "$0")/../lib/fuse-daemon.sh"
source "$(dirname "$0")/../lib/plugin-env.sh"
source "$(dirname "$0")/../lib/smaps.sh"

# key_page_locked PID: exactly one mapping looks like the key's page, and
# it is locked.
key_page_locked () {
  local pages
  pages=$(smaps_anonymous "$1" |
            awk '$1 == 4 && / dd( |$)/ && !/ nr( |$)/')
  echo "# the key's page (size rss locked flags): ${pages:-none}"
  [[ -n $pages && $(wc -l <<<"$pages") -eq 1 ]] && awk '$3 != 4 { exit 1 }' <<<"$pages"
}

# eventually COMMAND…: COMMAND succeeds within 5 s (the daemon locks
# after it has forked, while its parent exits); its last run's output
# goes to the log.
eventually () {
  for _ in $(seq 50); do
    "$@" >/dev/null && break
    sleep 0.1
  done
  "$@"
}

# fuse_daemon MOUNTPOINT: the PID of the cswap-fuse whose command line
# ends with MOUNTPOINT (read with builtins: pgrep hangs with a sanitizer
# runtime preloaded).
fuse_daemon () {
  local cmdline args
  for cmdline in /proc/[0-9]*/cmdline; do
    mapfile -d '' args <"$cmdline" 2>/dev/null || continue
    if [[ ${#args[@]} -gt 1 && ${args[0]} == */cswap-fuse &&
          ${args[-1]} == "$1" ]]; then
      cmdline=${cmdline#/proc/}
      echo "${cmdline%/cmdline}"
    fi
  done
}

# check_key_locked NAME PID LOG: the daemon NAME, which logged to LOG,
# runs in the background as PID (empty: it did not start) with its key's
# page locked; fuse-daemon.sh's EXIT trap stops it.
check_key_locked () {
  if [[ -z $2 ]]; then
    check "$1 starts in the background: $(cat "$3")" false
    return
  fi
  fuse_pids+=("$2")
  check "$1 in the background: the key's page is locked" \
    eventually key_page_locked "$2"
}

sealed=(backing-encrypt=yes lock-memory=no ctl=none)

mnt=$tmp/mnt-fuse
mkdir "$mnt"
# No -f: cswap-fuse forks into the background once it has mounted.
fuse_options=(--backing "$tmp/fuse.backing" --backing-size 64M)
for option in "${sealed[@]}"; do fuse_options+=(-o "$option"); done
pid=
"$cswap_fuse" --size 64M "${fuse_options[@]}" "$mnt" 2>"$tmp/fuse.log" &&
  pid=$(fuse_daemon "$mnt")
check_key_locked cswap-fuse "$pid" "$tmp/fuse.log"

pid=
nbdkit -U "$tmp/nbd.sock" -P "$tmp/nbd.pid" "$CSWAP_PLUGIN" size=64M \
  "backing=$tmp/nbd.backing" backing-size=64M "${sealed[@]}" 2>"$tmp/nbd.log" &&
  eventually test -s "$tmp/nbd.pid" && pid=$(cat "$tmp/nbd.pid")
check_key_locked "nbdkit cswap" "$pid" "$tmp/nbd.log"
done_testing
