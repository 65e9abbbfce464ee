#!/bin/bash
# cswap: cswap-fuse end to end on one transport — mount, random I/O checked
# against a reference (fuse-io), the operations a fixed-size device file
# refuses, a final punch of the whole file, SIGHUP ignored, a clean stop on
# SIGTERM (no swap on the device; tests/swap/test-stop-signals.sh has the
# refusal) with the exit stats line showing no page and no pool memory
# left, a clean exit when unmounted, a daemon killed mid-request leaving
# I/O failing rather than hanging, and the error messages.
#
# Usage: test-fuse.sh classic|uring|auto-off|uring-refused
#   classic        --transport classic (libfuse's loop)
#   uring          --transport uring, with enable_uring turned on
#   auto-off       the default transport (auto) with enable_uring turned
#                  off: it must fall back to its own read/write threads,
#                  and --transport uring must fail, however it is given
#   uring-refused  auto with enable_uring on, but the kernel made to refuse
#                  the ring registrations (cswap-fuse-faults, the test
#                  build, with CSWAP_FUSE_URING_FAULT=refuse):
#                  after answering INIT itself the daemon must serve with
#                  read()/write() on /dev/fuse, and --transport uring fail
# All but classic change /sys/module/fuse/parameters/enable_uring and put
# it back at exit (tests/lib/enable-uring.sh).
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/enable-uring.sh"

mode=${1:-classic}
[ "$(id -u)" -eq 0 ] || skip "mounting the device file needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
fuse_io=$CSWAP_BUILD_ROOT/tests/daemon/fuse-io

size=$((64 * 1024 * 1024))
mnt=$(mktemp -d)
log=$(mktemp)
out=$(mktemp)
config=$(mktemp)
pid=
writer=
# shellcheck disable=SC2317  # runs from the EXIT trap
cleanup () {
  [ -n "$writer" ] && kill "$writer" 2>/dev/null
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  grep -qs " $mnt fuse" /proc/mounts && fusermount3 -u -z "$mnt"
  rmdir "$mnt"
  rm -f "$log" "$out" "$config"
  enable_uring_restore
}
trap cleanup EXIT

case $mode in
  classic)
    transport_args=(--transport classic)
    transport_line="transport: classic"
    ;;
  uring)
    enable_uring_set Y || skip "cannot turn FUSE over io_uring on ($ENABLE_URING_PARAM)"
    transport_args=(--transport uring)
    transport_line="transport: io_uring, [0-9]+ queues"
    ;;
  auto-off)
    enable_uring_set N || skip "cannot turn FUSE over io_uring off ($ENABLE_URING_PARAM)"
    transport_args=()
    transport_line="transport: read/write on /dev/fuse, [0-9]+ threads \(no io_uring: the kernel's FUSE_INIT does not offer"
    ;;
  uring-refused)
    enable_uring_set Y || skip "cannot turn FUSE over io_uring on ($ENABLE_URING_PARAM)"
    cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse-faults
    export CSWAP_FUSE_URING_FAULT=refuse
    transport_args=()
    transport_line="transport: read/write on /dev/fuse, [0-9]+ threads \(no io_uring: the kernel refused"
    ;;
  *)
    echo "Bail out! usage: $0 classic|uring|auto-off|uring-refused"
    exit 1
    ;;
esac

not () {
  ! "$@"
}

# Runs ARGS, which must fail within 10 s (a timeout is a hang, not a failure).
fails_quickly () {
  timeout 10 "$@"
  local status=$?
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ]
}

write_past_end_fails () {
  local message
  message=$(dd if=/dev/zero of="$mnt/swap" bs=4096 seek=$((size / 4096)) \
              count=1 conv=notrunc status=none 2>&1) && return 1
  sed "s/^/# /" <<<"$message"
  grep -q 'File too large' <<<"$message"
}

stats_show_nothing_held () {
  [[ $stats == *" pages_stored=0 "* && $stats == *" pool_bytes=0 "* ]]
}

mounted () {
  grep -qs " $mnt fuse.cswap " /proc/mounts
}

# Runs cswap-fuse with ARGS, expecting failure with a message matching
# PATTERN.
fails_with () {
  local pattern=$1
  shift
  local message
  # timeout: should it mount after all, the test must not hang.
  if message=$(timeout 10 "$cswap_fuse" -f "$@" 2>&1); then
    echo "# cswap-fuse $* succeeded"
    return 1
  fi
  sed "s/^/# /" <<<"$message"
  grep -q -- "$pattern" <<<"$message"
}

check "a missing mount point is named" \
  fails_with "$mnt/missing: No such file or directory" --size 64M "$mnt/missing"
check "a bad size names the option" \
  fails_with "size=12345: the size must be" --size=12345 "$mnt"
check "a bad -o size names the option" \
  fails_with "size=64Q" -o size=64Q "$mnt"
check "an unknown option is named" \
  fails_with "--frobnicate: unknown option" --frobnicate 1 --size 64M "$mnt"
check "an unknown -o option is named" \
  fails_with "frobnicate" -o frobnicate=1 --size 64M "$mnt"
check "a bad size expression names the option and the column" \
  fails_with "size=ram / 0: division by zero at column 5" --size='ram / 0' "$mnt"
check "an unknown transport is named" \
  fails_with "transport=bogus: use auto, uring or classic" \
  --transport=bogus --size 64M "$mnt"
if [ "$mode" = auto-off ]; then
  off="transport=uring: FUSE over io_uring is off"
  check "--transport=uring fails clearly while enable_uring is N" \
    fails_with "$off" --transport=uring --size 64M "$mnt"
  check "--transport uring fails clearly while enable_uring is N" \
    fails_with "$off" --transport uring --size 64M "$mnt"
  check "-o transport=uring fails clearly while enable_uring is N" \
    fails_with "$off" -o transport=uring --size 64M "$mnt"
  printf 'size = 64M\ntransport = uring\n' >"$config"
  check "transport = uring in the config file fails clearly while enable_uring is N" \
    fails_with "$off" --config "$config" "$mnt"
fi
if [ "$mode" = uring-refused ]; then
  check "--transport uring fails clearly when the kernel refuses the ring" \
    fails_with "transport=uring: the kernel refused the ring registration" \
    --transport uring --size 64M "$mnt"
  check "and leaves nothing mounted" not mounted
fi

# Starts cswap-fuse with the mode's transport and ARGS, waits for the mount.
# start_daemon [OPTION…]: cswap-fuse on $mnt, given as $mount_arg (from
# $mount_cwd) when those are set, run by ${launcher[@]} (env by default).
launcher=(env)
start_daemon () {
  (cd "${mount_cwd:-.}" && exec "${launcher[@]}" "$cswap_fuse" -f --size "$size" -o ctl=none \
     "${transport_args[@]}" "$@" "${mount_arg:-$mnt}" 2>"$log") &
  pid=$!
  for _ in $(seq 100); do
    mounted && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "Bail out! cswap-fuse did not mount"
  cat "$log" >&2
  exit 1
}

start_daemon -o codec=lz4 --threads 8
check "the mount holds one file, swap, of the device's size, mode 0600" \
  test "$(ls "$mnt")" = swap -a "$(stat -c '%s %a' "$mnt/swap")" = "$size 600"
# The line may come after the mount is seen (a slow ThreadSanitizer run
# once checked before it was written): wait up to 5 s for it.
transport_said () {
  for _ in $(seq 50); do
    grep -qE "^cswap-fuse: $transport_line" "$log" && return 0
    sleep 0.1
  done
  return 1
}
check "cswap-fuse says which transport it uses ($transport_line)" \
  transport_said
check "mounting again on the same directory is refused" \
  fails_with "already a mount point" --size 64M "$mnt"

# cpu_listed CPU LIST: whether LIST (a Cpus_allowed_list: 0-3,6) holds CPU.
cpu_listed () {
  local cpu=$1 part
  local -a parts
  IFS=, read -ra parts <<<"$2"
  for part in "${parts[@]}"; do
    [ "$cpu" -ge "${part%-*}" ] && [ "$cpu" -le "${part#*-}" ] && return 0
  done
  return 1
}

# ring_threads_bound: the daemon has a cswap-ring-N thread, and each may
# run on CPU N alone where the daemon may run there, on the daemon's own
# CPUs elsewhere.
ring_threads_bound () {
  local daemon_cpus task name qid cpus want rings=0
  daemon_cpus=$(awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$pid/status")
  for task in /proc/"$pid"/task/*; do
    name=$(cat "$task/comm" 2>/dev/null) || continue
    [[ $name == cswap-ring-* ]] || continue
    qid=${name#cswap-ring-}
    cpus=$(awk '/^Cpus_allowed_list:/ {print $2}' "$task/status")
    want=$daemon_cpus
    cpu_listed "$qid" "$daemon_cpus" && want=$qid
    echo "# $name may run on $cpus"
    [ "$cpus" = "$want" ] || return 1
    rings=$((rings + 1))
  done
  [ "$rings" -gt 0 ]
}

if [ "$mode" = uring ]; then
  check "each ring's thread runs on its queue's CPU" ring_threads_bound
fi

"$fuse_io" "$mnt/swap" 4 3000 >"$out"
io_status=$?
tap_include "$out"
check "fuse-io exited 0" test "$io_status" -eq 0

check "truncate is refused" not truncate -s 1M "$mnt/swap"
check "O_TRUNC is refused" not sh -c ": > '$mnt/swap'"
check "creating another file is refused" not touch "$mnt/other"
check "removing the file is refused" not rm -f "$mnt/swap"
check "writing past the end fails with EFBIG" write_past_end_fails
check "punching the whole file succeeds" \
  fallocate --punch-hole --offset 0 --length "$size" "$mnt/swap"
check "after the punch the file reads as zeros" \
  cmp -s -n "$size" "$mnt/swap" /dev/zero

# SIGHUP (a closed terminal, a "reload") must not stop a daemon that may
# hold swapped pages: it is logged and ignored.
kill -HUP "$pid"
sleep 0.5
check "SIGHUP leaves cswap-fuse running" kill -0 "$pid"
check "and mounted" mounted
check "and it says it ignored it" grep -q "^cswap-fuse: SIGHUP: ignored" "$log"
check "the file still reads after SIGHUP" \
  dd if="$mnt/swap" of=/dev/null bs=4k count=1 iflag=direct status=none

# No swap on the device: SIGTERM stops it cleanly.
kill -TERM "$pid"
wait "$pid"
exit_status=$?
pid=
check "cswap-fuse exits 0 on SIGTERM" test "$exit_status" -eq 0
check "and leaves nothing mounted" not mounted

grep -v '^cswap: stats' "$log" | sed 's/^/# /'
stats=$(grep '^cswap: stats' "$log")
echo "# $stats"
check "after punching everything cswap-fuse holds no page and no pool memory" \
  stats_show_nothing_held

# Unmounted from outside: the daemon sees the connection end and exits 0.
start_daemon
check "writing through a fresh mount works" \
  dd if=/dev/urandom of="$mnt/swap" bs=64k count=16 oflag=direct conv=notrunc status=none
check "fusermount3 -u unmounts" fusermount3 -u "$mnt"
timeout 20 tail --pid="$pid" -f /dev/null
wait "$pid"
exit_status=$?
pid=
check "cswap-fuse exits 0 once unmounted ($exit_status)" test "$exit_status" -eq 0
check "and prints its stats line" grep -q '^cswap: stats ' "$log"

# Started where it may run on CPU 0 alone (taskset, as a cpuset or
# CPUAffinity= would), the rings of the other CPUs' queues stay there too.
if [ "$mode" = uring ] && [ "$(nproc --all)" -gt 1 ]; then
  launcher=(taskset -c 0)
  start_daemon
  launcher=(env)
  check "started on CPU 0 alone, it says it uses io_uring" transport_said
  check "and every ring's thread stays on CPU 0" \
    ring_threads_bound
  check "and the device serves" \
    dd if=/dev/urandom of="$mnt/swap" bs=64k count=16 oflag=direct conv=notrunc status=none
  kill -TERM "$pid"
  wait "$pid"
  pid=
fi

# A relative mount point: the daemon runs in / once started, and must
# still unmount what it mounted when it stops.
mount_cwd=$(dirname "$mnt") mount_arg=$(basename "$mnt") start_daemon
kill -TERM "$pid"
wait "$pid"
exit_status=$?
pid=
check "mounted by a relative path, cswap-fuse exits 0 on SIGTERM ($exit_status)" \
  test "$exit_status" -eq 0
check "and leaves nothing mounted" not mounted
check "without a failed unmount" not grep -q "failed to unmount" "$log"

# Killed mid-request: I/O must fail (ENOTCONN), not hang, and a lazy
# unmount must clear the mount.
start_daemon
# Exits 3 once a dd fails; 124 from timeout would mean a hang.
timeout 60 sh -c "while dd if=/dev/urandom of='$mnt/swap' bs=64k count=1024 \
  oflag=direct conv=notrunc status=none; do :; done; exit 3" 2>/dev/null &
writer=$!
sleep 1
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
wait "$writer"
writer_status=$?
writer=
check "a writer stops with an error when the daemon is killed ($writer_status)" \
  test "$writer_status" -eq 3
check "reading the file then fails instead of hanging" \
  fails_quickly dd if="$mnt/swap" of=/dev/null bs=4k count=1 iflag=direct status=none
check "fusermount3 -u -z clears the dead mount" fusermount3 -u -z "$mnt"
check "and nothing is left mounted" not mounted

done_testing
