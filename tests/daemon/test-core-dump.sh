#!/bin/bash
# cswap: a daemon's core dump would hold every swapped page (issue 27), so
# both front ends, cswap-fuse and nbdkit cswap, make none unless
# core-dump=yes asks for one.  By default the daemon is not dumpable
# (proc(5): its /proc/PID files are then root's, whoever it runs as), its
# RLIMIT_CORE is 0, and its coredump_filter 0 (no memory at all, even for
# a dump helper that ignores the limit).  With core-dump=yes all three are
# as the daemon found them.  Either way the pool, which holds every stored
# page (the deferred queue's raw pages too), is left out of dumps: after
# 16 MiB of random pages, at least that much of the daemon's memory is in
# mappings marked MADV_DONTDUMP (VmFlags dd).
#
# The daemons run as nobody, so that the owner of /proc/PID tells whether
# they are dumpable; nothing is crashed and no core is written.  They run
# from copies nobody can read (stage-for-nobody.sh), wherever the build is.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/fuse-daemon.sh"
source "$(dirname "$0")/../lib/plugin-env.sh"
source "$(dirname "$0")/../lib/smaps.sh"
source "$(dirname "$0")/../lib/stage-for-nobody.sh"

written_mib=16
nobody_uid=$(id -u nobody)
# The daemons inherit an unlimited RLIMIT_CORE from here, so that only
# what they do themselves can lower it.
ulimit -c unlimited || skip "cannot raise RLIMIT_CORE"
# ASan sets RLIMIT_CORE to 0 itself unless told not to.
[ -z "${ASAN_OPTIONS:-}" ] || export ASAN_OPTIONS=$ASAN_OPTIONS:disable_coredump=0
stage_for_nobody cswap_fuse "$cswap_fuse"
stage_for_nobody CSWAP_PLUGIN "$CSWAP_PLUGIN"

# start FRONTEND NAME KEY=VALUE…: the daemon as nobody, in the foreground,
# in the background (fuse-daemon.sh's EXIT trap stops it); sets pid.
start () {
  local frontend=$1 name=$2 option options=()
  shift 2
  mkdir "$tmp/$name" "$tmp/mnt-$name"
  chown nobody: "$tmp/$name" "$tmp/mnt-$name"
  if [[ $frontend == fuse ]]; then
    for option; do options+=(-o "$option"); done
    "${nobody[@]}" "$cswap_fuse" -f --size 64M -o ctl=none -o lock-memory=no \
      "${options[@]}" "$tmp/mnt-$name" 2>"$tmp/$name.log" &
  else
    "${nobody[@]}" nbdkit -f -U "$tmp/$name/sock" "$CSWAP_PLUGIN" size=64M \
      ctl=none lock-memory=no "$@" 2>"$tmp/$name.log" &
  fi
  pid=$!
  fuse_pids+=("$pid")
  for _ in $(seq 100); do
    if [[ $frontend == fuse ]]; then
      grep -qs " $tmp/mnt-$name fuse.cswap " /proc/mounts && return
    else
      [ -S "$tmp/$name/sock" ] && return
    fi
    sleep 0.1
  done
  echo "Bail out! $frontend $name did not start"
  cat "$tmp/$name.log" >&2
  exit 1
}

# write_random FRONTEND NAME: $written_mib MiB of random pages, which do
# not compress: each is stored raw, a page of pool memory.  Through FUSE
# as nobody: only the user who mounted it may use the file.
write_random () {
  if [[ $1 == fuse ]]; then
    "${nobody[@]}" dd if=/dev/urandom of="$tmp/mnt-$2/swap" bs=1M \
      count=$written_mib iflag=fullblock oflag=direct conv=notrunc status=none
  else
    /usr/bin/python3 -c '
import nbd, os, sys
h = nbd.NBD()
h.connect_unix(sys.argv[1])
for i in range(int(sys.argv[2])):
    h.pwrite(os.urandom(1 << 20), i << 20)
h.shutdown()' "$tmp/$2/sock" "$written_mib"
  fi
}

proc_owner () {                 # proc_owner PID: the uid /proc/PID is
  stat -c %u "/proc/$1/status"
}

core_limit () {                 # core_limit PID: "soft hard"
  awk '/^Max core file size/ { print $5, $6 }' "/proc/$1/limits"
}

pool_left_out_of_dumps () {
  local kb
  kb=$(smaps_undumped_rss_kb "$pid")
  echo "# $kb kB resident in mappings left out of core dumps"
  [ "$kb" -ge $((written_mib * 1024)) ]
}

for frontend in fuse nbd; do
  start "$frontend" "$frontend-default"
  write_random "$frontend" "$frontend-default"
  check "$frontend: not dumpable by default (/proc/PID is root's)" \
    test "$(proc_owner "$pid")" = 0
  check "$frontend: RLIMIT_CORE is 0 by default" \
    test "$(core_limit "$pid")" = "0 0"
  check "$frontend: coredump_filter is 0 by default" \
    test "$(cat "/proc/$pid/coredump_filter")" = 00000000
  check "$frontend: the pool's pages are left out of core dumps" \
    pool_left_out_of_dumps
done
for frontend in fuse nbd; do
  start "$frontend" "$frontend-dumps" core-dump=yes
  write_random "$frontend" "$frontend-dumps"
  check "$frontend: core-dump=yes: dumpable (/proc/PID is nobody's)" \
    test "$(proc_owner "$pid")" = "$nobody_uid"
  check "$frontend: core-dump=yes leaves RLIMIT_CORE as it was" \
    test "$(core_limit "$pid")" = "unlimited unlimited"
  check "$frontend: core-dump=yes leaves coredump_filter as it was" \
    test "$(cat "/proc/$pid/coredump_filter")" = "$(cat /proc/self/coredump_filter)"
  check "$frontend: core-dump=yes still leaves the pool out of dumps" \
    pool_left_out_of_dumps
done
done_testing
