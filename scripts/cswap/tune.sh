# shellcheck shell=bash
# cswap helper: tuning while cswap is up: guest halt polling, vm.min_free_kbytes,
# vm.page-cluster, zswap, hibernation refused (`tune`, `untune`).
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# Guest halt polling.  A swap-in through cswap is a chain of wake-ups
# across CPUs: the loop device's worker, the daemon's thread, the block
# softirq, the faulting task.  On a VM whose idle CPUs halt at once (the
# haltpoll cpuidle driver with guest_halt_poll_ns at 0), every wake-up of
# an idle CPU is a halt exit to the host, and a real program's swap-ins
# took about twice as long (doc/design.md, "Idle CPUs and halt polling").
# zram, which decompresses in the faulting task, does not notice.  With
# halt-poll=auto, `tune` sets the kernel's own default while cswap is up
# and records the old value; `untune` puts it back unless someone changed
# it since.  Polling spends host CPU time on idle vCPUs (at most 200 us
# per idle period); halt-poll=keep leaves the setting alone.
readonly halt_poll_default_ns=200000

halt_poll_param () { echo "$sysfs/module/haltpoll/parameters/guest_halt_poll_ns"; }
halt_poll_saved () { echo "$state_dir/halt-poll-was"; }

# tune_param FILE VALUE SAVED WHAT UNIT KEY [WHY]: writes VALUE to FILE,
# first recording what FILE held in SAVED (a first tune's record is kept),
# and says so, naming the configuration KEY that leaves it alone, and WHY.
tune_param ()
{
  local file=$1 value=$2 saved=$3 what=$4 unit=$5 key=$6 why=${7:-} was
  was=$(cat "$file" 2>/dev/null) || return 0
  [[ ! -e $saved ]] || return 0
  mkdir -p "$state_dir" && echo "$was" >"$saved" || return 0
  if { echo "$value" >"$file"; } 2>/dev/null; then
    say "$what: $value$unit while cswap is up (was $was; $key=keep leaves it)"
    [[ -z $why ]] || say "$why"
  else
    rm -f "$saved"
  fi
}

# untune_param FILE VALUE SAVED: puts back what SAVED recorded, unless
# FILE no longer holds the VALUE tune wrote (someone changed it since).
untune_param ()
{
  local file=$1 value=$2 saved=$3 was
  [[ -r $saved ]] || return 0
  was=$(cat "$saved")
  if [[ $(cat "$file" 2>/dev/null) == "$value" ]]; then
    { echo "$was" >"$file"; } 2>/dev/null || warn "cannot put $file back to $was"
  fi
  rm -f "$saved"
}

tune_halt_poll ()
{
  local param
  param=$(halt_poll_param)
  [[ $halt_poll == auto && -w $param ]] || return 0
  [[ $(cat "$sysfs/devices/system/cpu/cpuidle/current_driver" 2>/dev/null) == haltpoll ]] \
    || return 0
  [[ $(cat "$param" 2>/dev/null) == 0 ]] || return 0
  tune_param "$param" "$halt_poll_default_ns" "$(halt_poll_saved)" \
    "guest halt polling" " ns" halt-poll
}

untune_halt_poll ()
{
  untune_param "$(halt_poll_param)" "$halt_poll_default_ns" "$(halt_poll_saved)"
}

# The free memory the kernel keeps.  Under whole-machine pressure the
# daemon stores swap-outs with memory from below the min watermark, which
# its real-time I/O threads may take and ordinary tasks may not: a
# quarter of the watermark on Linux 6.1, a half from 6.3 (doc/design.md,
# "Staying alive under memory pressure").  The kernel's default on a
# small machine (2-4 MiB at 512 MiB of RAM) leaves them less than the
# swap-outs in flight: in a 384 MiB VM (330 MiB MemTotal) the nbd path
# hung with it and finished with 16 MiB.  But what is kept free is taken
# from everything else: in a 160 MiB VM (107 MiB MemTotal) fill-check on
# cswap-fuse was OOM-killed with 16 MiB and 8 MiB, and completed with 4
# and 5.4 MiB (doc/design.md, "The smallest machine").  So with
# min-free=auto, `tune` raises vm.min_free_kbytes to a twentieth of
# MemTotal, at most 16 MiB, where it is lower, and records the old value;
# `untune` puts it back unless someone changed it since.
# min-free=keep leaves it.
readonly min_free_max_kbytes=16384

min_free_param () { echo "$procsys/vm/min_free_kbytes"; }
min_free_saved () { echo "$state_dir/min-free-was"; }

# min_free_target: the KiB min-free=auto asks for on this machine.
min_free_target ()
{
  local kib
  kib=$(($(mem_total_kib) / 20))
  ((kib > 0 && kib <= min_free_max_kbytes)) || kib=$min_free_max_kbytes
  echo "$kib"
}

# raise_param SETTING FILE TARGET SAVED WHAT UNIT KEY [WHY]: tune_param
# where SETTING (the configuration's value) is auto and FILE holds less
# than TARGET.
raise_param ()
{
  local setting=$1 file=$2 target=$3
  shift 3
  [[ $setting == auto && -w $file ]] || return 0
  [[ $(cat "$file" 2>/dev/null) -lt $target ]] || return 0
  tune_param "$file" "$target" "$@"
}

tune_min_free ()
{
  raise_param "$min_free" "$(min_free_param)" "$(min_free_target)" \
    "$(min_free_saved)" "vm.min_free_kbytes" " KiB" min-free
}

untune_min_free ()
{
  untune_param "$(min_free_param)" "$(min_free_target)" "$(min_free_saved)"
}

# Swap readahead.  A swap-in through cswap is a round trip to the daemon
# whatever its length, where zram's is a decompression in the faulting
# task (which is why zram skips readahead), so cswap gains from fewer,
# longer reads.  The kernel reads at most 2^vm.page-cluster pages at a
# time (default 3: 8 pages); its VMA readahead, the default, stops at 2^5
# however large page-cluster is (SWAP_RA_ORDER_CEILING) and shrinks its
# window where the pages read ahead go unused.  In a 256 MiB VM
# (doc/design.md, "Swap readahead: page-cluster 5"), page-cluster 5 took
# stress-ng from 46 to 34 s on cswap-fuse and from 72-79 to 43 s through
# nbd (zram 20-26), fill-check from 70 to 64 s (zram 59), and sort was
# unchanged.  With page-cluster=auto, `tune` raises vm.page-cluster to 5
# where it is lower and records the old value; `untune` puts it back
# unless someone changed it since.  page-cluster=keep leaves it.
readonly page_cluster_target=5

page_cluster_param () { echo "$procsys/vm/page-cluster"; }
page_cluster_saved () { echo "$state_dir/page-cluster-was"; }

tune_page_cluster ()
{
  raise_param "$page_cluster" "$(page_cluster_param)" "$page_cluster_target" \
    "$(page_cluster_saved)" "vm.page-cluster" "" page-cluster
}

untune_page_cluster ()
{
  untune_param "$(page_cluster_param)" "$page_cluster_target" "$(page_cluster_saved)"
}

# zswap.  Where it is enabled (CONFIG_ZSWAP_DEFAULT_ON or zswap.enabled=1,
# as some distributions ship it), the kernel compresses each page it swaps
# out into zswap's own pool, in front of every swap device; only when that
# pool is full, or its shrinker runs, does it decompress the page and
# write it to cswap, which compresses it again.  With zswap=off (the
# default), `tune` turns zswap off while cswap is up and records that it
# was on; `untune` turns it back on unless someone changed it since.  Off,
# zswap stores no new page, but keeps those it holds (mm/zswap.c:
# zswap_store looks at `enabled`, zswap_load and the writeback do not)
# until they are faulted in, freed, written back by zswap's shrinker or
# their device is swapped off.  `up` tunes once swap is on, so the pages
# zswap took in between stay in its pool too.
# A kernel without zswap, or with it off, is left alone; zswap=keep leaves
# it on, and `tune` and `check` say what that costs.
readonly zswap_off=N
readonly zswap_twice="zswap compresses every page before cswap does, and decompresses it for cswap to compress again when it writes it back"

zswap_param () { echo "$sysfs/module/zswap/parameters/enabled"; }
zswap_saved () { echo "$state_dir/zswap-was"; }

# zswap_on: the kernel has zswap, and it is enabled.
zswap_on () { [[ $(cat "$(zswap_param)" 2>/dev/null) == Y ]]; }

warn_zswap_kept () { warn "zswap is on and zswap=keep leaves it on: $zswap_twice"; }

tune_zswap ()
{
  zswap_on || return 0
  if [[ $zswap == keep ]]; then
    warn_zswap_kept
    return 0
  fi
  tune_param "$(zswap_param)" "$zswap_off" "$(zswap_saved)" zswap "" zswap "$zswap_twice"
}

untune_zswap ()
{
  untune_param "$(zswap_param)" "$zswap_off" "$(zswap_saved)"
}

# tune, untune: every setting above.
# Hibernation.  systemd hibernates to the swap /sys/power/resume names,
# and where it names none to the highest-priority swap with room, leaving
# out only /dev/zram* (252: find_hibernate_location, src/shared/
# sleep-config.c; 257: find_suitable_hibernation_device_full,
# src/shared/hibernate-util.c): with cswap up at priority 100, its loop
# or nbd device.  The kernel writes the image there after it has frozen
# every process, the daemon included: the write waits for good, and had it
# finished, no daemon would be there at resume to read the image back.
# Pointing the resume device at a disk swap below is no cure: before it
# writes the image the kernel frees memory (hibernate_preallocate_memory,
# kernel/power/snapshot.c, after freeze_processes), and the pages it swaps
# out for that go to cswap's device first, to the frozen daemon.  So while
# cswap is up, a sleep.conf drop-in turns hibernation off, hybrid sleep
# and suspend-then-hibernate with it; suspend to RAM stays.  systemd reads
# it at each request, and logind checks it before inhibitors, for root
# too: `systemctl hibernate` fails at once with "Sleep verb "hibernate"
# not supported" (252), and desktops no longer offer it.  No inhibitor
# lock: its "sleep" covers suspend as well, and root's own requests pass
# it.  A file of the same name in /etc/systemd/sleep.conf.d overrides
# this one.
sleep_conf_dir=${CSWAP_SLEEP_CONF_DIR:-/run/systemd/sleep.conf.d}
sleep_conf () { echo "$sleep_conf_dir/zz-cswap.conf"; }

tune_hibernation ()
{
  local file
  file=$(sleep_conf)
  [[ ! -e $file ]] || return 0
  if mkdir -p "$sleep_conf_dir" 2>/dev/null && cat >"$file" 2>/dev/null <<EOF
# Written by \`cswap up' (cswap(8), tune), removed by \`cswap down': the
# kernel would write the hibernation image to, or swap out through,
# cswap's device after freezing the daemon that serves it, and hang.
# Run \`cswap down' before hibernating.
[Sleep]
AllowHibernation=no
AllowHybridSleep=no
AllowSuspendThenHibernate=no
EOF
  then
    say "hibernation: refused while cswap is up ($file)"
  else
    rm -f "$file"
    warn "cannot write $file: hibernation is not refused, and would hang on cswap's device"
  fi
}

untune_hibernation () { rm -f "$(sleep_conf)"; }

tune () { tune_halt_poll; tune_min_free; tune_page_cluster; tune_zswap; tune_hibernation; }
untune ()
{
  untune_halt_poll; untune_min_free; untune_page_cluster; untune_zswap
  untune_hibernation
}
