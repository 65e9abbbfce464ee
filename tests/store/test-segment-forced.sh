#!/bin/bash
# cswap: test-segment-forced under kernel.shm_rmid_forced=1 (issue 62,
# item 7), set here and put back in a trap.  Root only; it changes a
# machine-wide sysctl, so it runs under the machine lock (suite machine).
set -u
test_bin=$1
if [[ $(id -u) -ne 0 ]]; then echo "1..0 # SKIP not root"; exit 0; fi
was=$(cat /proc/sys/kernel/shm_rmid_forced) || { echo "1..0 # SKIP no kernel.shm_rmid_forced"; exit 0; }
trap 'echo "$was" >/proc/sys/kernel/shm_rmid_forced' EXIT
if ! echo 1 2>/dev/null >/proc/sys/kernel/shm_rmid_forced; then
  echo "1..0 # SKIP kernel.shm_rmid_forced cannot be set here"
  exit 0
fi
"$test_bin"
