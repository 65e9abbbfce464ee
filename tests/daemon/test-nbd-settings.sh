#!/bin/bash
# cswap: the plugin warns at start about what leaves a swap device served
# to the same machine unsafe under memory pressure (daemon/nbdkit/nbdkit-settings.c),
# naming the command that fixes each: nbdkit's default threads, TLS not
# off, vm.min_free_kbytes below a twentieth of RAM (at most 16 MiB), and
# vm.page-cluster below 5.
# With the man page's settings it says none of it, nor of the sysctls
# under cswap(8) (which sets them once the device is up), and a server of
# exports (other machines' swap) is left alone.  The machine's files are
# stand-ins ($CSWAP_PROC_SYS, $CSWAP_MEMINFO): a 512 MiB machine.
set -uo pipefail
source "$(dirname "$0")/../lib/plugin-env.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/sys/vm"
echo 'MemTotal:         524288 kB' > "$dir/meminfo"
export CSWAP_PROC_SYS=$dir/sys CSWAP_MEMINFO=$dir/meminfo

n=0 status=0
check () {
  local name=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $name"; else echo "not ok $n - $name"; status=1; fi
}

# start MIN_FREE_KIB PAGE_CLUSTER NBDKIT-WORDS… -- PLUGIN-WORDS…:
# nbdkit's warnings.
start () {
  local min_free=$1 page_cluster=$2 words=()
  shift 2
  echo "$page_cluster" > "$dir/sys/vm/page-cluster"
  while [[ $1 != -- ]]; do words+=("$1"); shift; done
  shift
  echo "$min_free" > "$dir/sys/vm/min_free_kbytes"
  nbdkit "${words[@]}" -U - "$CSWAP_PLUGIN" size=16M ctl=none "$@" --run true \
    2>&1 | grep 'cswap: warning:' | grep -v 'oom_score_adj\|IO_FLUSHER\|SCHED_FIFO\|mlockall'
}

out=$(start 2048 3 --)
sed 's/^/# /' <<<"$out"
check "nbdkit's default threads: warned, naming --threads" \
  grep -q 'nbdkit serves with 16 threads.*run nbdkit --threads [0-9]' <<<"$out"
check "TLS not off: warned, naming --tls=off" \
  grep -q 'run nbdkit --tls=off' <<<"$out"
check "vm.min_free_kbytes 2048 on 512 MiB: warned, naming sysctl -w vm.min_free_kbytes=16384" \
  grep -q 'vm.min_free_kbytes is 2048.*sysctl -w vm.min_free_kbytes=16384$' <<<"$out"
check "vm.page-cluster 3: warned, naming sysctl -w vm.page-cluster=5" \
  grep -q 'vm.page-cluster is 3.*sysctl -w vm.page-cluster=5$' <<<"$out"

out=$(start 16384 5 --tls=off --threads 2 --)
sed 's/^/# /' <<<"$out"
check "the man page's settings: no warning" test -z "$out"

echo 'MemTotal:         163840 kB' > "$dir/meminfo"
out=$(start 2048 5 --tls=off -t 2 --)
check "160 MiB: a twentieth of RAM asked, 8192 KiB" \
  grep -q 'sysctl -w vm.min_free_kbytes=8192$' <<<"$out"

out=$(CSWAP_SYSCTLS_BY_CSWAP=1 start 2048 3 --tls=off --threads 2 --)
check "started by cswap(8), which tunes the sysctls itself: no warning" test -z "$out"

out=$(start 2048 3 -- export=a)
check "a server of exports: no warning" test -z "$out"
echo "1..$n"
exit $status
