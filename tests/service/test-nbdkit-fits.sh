#!/bin/bash
# cswap: frontend = nbd on a machine too small for nbdkit to start.
# Debian 12's nbdkit has 192 MiB of static buffers, charged when it is
# exec'd; under vm.overcommit_memory = 0 a machine with less RAM and swap
# than that kills it with SIGSEGV before it runs (seen in tests/vm at
# 192 MiB).  `cswap run` and `up` must say so and why, not start a daemon
# that dies; with overcommit 1, or RAM to spare, they go ahead.  Simulated
# /proc/meminfo and /proc/sys (CSWAP_MEMINFO, CSWAP_PROC_SYS).  And the
# options nbdkit is started with for a local device.
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/sanitizer-env.sh"   # the plugin in nbdkit
source "$(dirname "$0")/../lib/tap.sh"
[[ $(id -u) -eq 0 ]] || skip "cswap run needs root"
real_nbdkit=$(command -v nbdkit) || skip "nbdkit is not installed"

dir=$(mktemp -d /tmp/cswap-nbdkit-fits.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin" "$dir/proc-sys/vm"
export CSWAP_STATE_DIR=$dir/state CSWAP_PROC_SYS=$dir/proc-sys
export CSWAP_BACKING_DIR=$dir/lib
export CSWAP_MEMINFO=$dir/meminfo
export CSWAP_NBDKIT_PLUGIN=$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so
export CSWAP_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse   # check_config looks for it
printf 'frontend = nbd\nsize = 64M\n' >"$dir/cswap.conf"

# machine OVERCOMMIT MEM_KIB SWAP_KIB NBDKIT: the simulated machine, and
# the program found as nbdkit on PATH.
machine ()
{
  rm -rf "$CSWAP_STATE_DIR"       # and the socket a killed nbdkit leaves
  echo "$1" >"$dir/proc-sys/vm/overcommit_memory"
  printf 'MemTotal: %s kB\nMemFree: 1000 kB\nSwapTotal: %s kB\n' "$2" "$3" >"$dir/meminfo"
  ln -sf "$4" "$dir/bin/nbdkit"
}
# run SECONDS: `cswap run` (the service's start), ended after SECONDS:
# where the check lets the real nbdkit start, it serves until then.
run () { PATH=$dir/bin:$PATH timeout "$1" bash "$CSWAP_BUILD_ROOT/systemd/cswap" -c "$dir/cswap.conf" run 2>&1 </dev/null; }
# served RC OUTPUT: nbdkit loaded the plugin and served until the timeout
# (124) ended it; the plugin's closing stats line says it was loaded.
served () { [[ $1 == 124 ]] && grep -q "^cswap: stats " <<<"$2"; }

machine 0 153600 0 "$real_nbdkit"
out=$(run 60); rc=$?
sed "s/^/# /" <<<"$out"
check "150 MiB, no swap, overcommit 0: run refuses (exit 1)" test $rc -eq 1
check "it says why and what to do" \
  grep -q "reserves [0-9]* MiB at start.*vm.overcommit_memory = 1 or use frontend = fuse" <<<"$out"

machine 0 153600 262144 "$real_nbdkit"
out=$(run 10); rc=$?
check "with 256 MiB of swap besides, nbdkit serves (exit $rc)" served $rc "$out"

machine 1 153600 0 "$real_nbdkit"
out=$(run 10); rc=$?
check "overcommit 1: nbdkit serves (exit $rc)" served $rc "$out"

machine 0 153600 0 /bin/true
out=$(run 60); rc=$?
check "a small nbdkit fits: it is started (exit $rc)" test $rc -eq 0

# What nbdkit is started with: --tls=off (the plugin then leaves GnuTLS
# unlocked) and a thread per CPU, 2 to 16 (nproc honours OMP_NUM_THREADS).
printf '#!/bin/sh\necho "nbdkit $*"\n' >"$dir/args-nbdkit"
chmod +x "$dir/args-nbdkit"
machine 1 153600 0 "$dir/args-nbdkit"
for cpus_threads in 1:2 3:3 64:16; do
  out=$(OMP_NUM_THREADS=${cpus_threads%:*} run 60)
  check "${cpus_threads%:*} CPU(s): nbdkit --tls=off --threads ${cpus_threads#*:}" \
    grep -q -- "^nbdkit --foreground --tls=off --threads ${cpus_threads#*:} " <<<"$out"
done
done_testing
