# shellcheck shell=bash
# cswap: bench/devices.sh — what the swap benchmarks share: progress and
# result lines, and every device they compare, set up and torn down the
# same way.  Source it after tests/swap/swap-lib.sh; do not run it.
#
# The caller sets: build (the build directory), plugin and cswap_fuse
# (the binaries), device_size (e.g. 1G), block_pages (the loop-tmpfs
# file's pages), log and log_fd (the run log), results (results.jsonl),
# and ladder_step (a size, 0 for none: cswap-fuse devices are then swapped
# on as cswap(8) does, a ladder of loop devices over windows of the file;
# a -follow device swaps on its first step and hands the ladder to the
# daemon, as `cswap up` does with ladder-online = follow, at a headroom of
# $LADDER_HEADROOM, default 32M as cswap.conf(5)'s, and a floor of
# $LADDER_FLOOR, default none: cswap.conf(5)'s auto, half the RAM, would
# keep a bench device's every step online on a large host).
#
#   note TEXT            a progress line on stderr and in the log
#   emit JSON            one line into results.jsonl (and stdout)
#   scenario BENCH DEVICE FUNCTION ARG…
#                        runs FUNCTION in a subshell whose exit runs the
#                        cleanup stack; a skip or failure becomes a line
#   setup_device NAME [OPTION=VALUE…]
#                        sets DEV and DEVS, and DAEMON_PID/NBDFUSE_PID/ZRAM/ZSWAP
#   swap_on_devices      swap on DEVS, at descending priorities
#   snapshot_cmd, memory_json, daemon_stats_json, run_fio, rss_bytes
#   tuning_json          the system settings that change swap-in latency
#   tune_as_up, untune_as_up
#                        halt polling and readahead as `cswap up` leaves them
t_start=$SECONDS
note ()
{
  printf '[%4ds] %s\n' $((SECONDS - t_start)) "$*" >&2
  echo "# $*" >&"$log_fd"
}

# tuning_json: the system settings a swap-in's time depends on, as one
# JSON object, for the machine line: runs are only comparable with the
# same ones.  cswap's swap-in is a chain of wake-ups across CPUs (doc/
# design.md, "Idle CPUs and halt polling"), so on a VM the guest's halt
# polling (0: an idle CPU halts at once) moves its time more than any
# daemon setting; readahead decides how many swap-ins there are.
tuning_json ()
{
  local poll=/sys/module/haltpoll/parameters/guest_halt_poll_ns
  jq -n --arg idle "$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)" \
    --arg poll "$(cat "$poll" 2>/dev/null)" \
    --arg cluster "$(cat /proc/sys/vm/page-cluster)" \
    --arg vma_ra "$(cat /sys/kernel/mm/swap/vma_ra_enabled 2>/dev/null)" \
    '{cpuidle_driver: $idle, guest_halt_poll_ns: ($poll | tonumber? // null),
      page_cluster: ($cluster | tonumber), vma_readahead: $vma_ra}'
}

# tune_as_up: guest halt polling and swap readahead as `cswap up` leaves
# them (halt-poll=auto: polling on where the VM had it off; page-cluster=
# auto: vm.page-cluster raised to 5), through cswap(8)'s own functions,
# for the whole run and every device in it alike; the caller's EXIT trap
# calls untune_as_up.  HALT_POLL=keep and PAGE_CLUSTER=keep measure the
# machine as it is.
tune_dir=
tune_as_up ()
{
  tune_dir=$(mktemp -d /tmp/cswap-bench-tune.XXXXXX) || return 0
  # shellcheck source=/dev/null  # the configured helper, in the build tree
  (source "$build/systemd/cswap" && state_dir=$tune_dir \
     && halt_poll=${HALT_POLL:-auto} page_cluster=${PAGE_CLUSTER:-auto} \
     && { tune_halt_poll; tune_page_cluster; }) >&2
}

untune_as_up ()
{
  [[ -n $tune_dir ]] || return 0
  # shellcheck source=/dev/null
  (source "$build/systemd/cswap" && state_dir=$tune_dir \
     && { untune_halt_poll; untune_page_cluster; }) >&2
  rm -rf "$tune_dir"
}

# emit JSON: one line into results.jsonl (and stdout).
emit ()
{
  local line
  line=$(jq -c . <<<"$1") || { note "bad JSON not recorded: $1"; return 1; }
  echo "$line" >>"$results"
  echo "$line"
}


# Run from the cleanup stack (shellcheck cannot see the calls).
# shellcheck disable=SC2317
zram_hot_remove ()
{
  echo "$1" >/sys/class/zram-control/hot_remove
}

# shellcheck disable=SC2317
zram_reset ()
{
  echo 1 >"/sys/block/$1/reset"
}

ZSWAP_PARAMS=/sys/module/zswap/parameters

# zswap_restore ENABLED COMPRESSOR: zswap is global; put it back as found.
# shellcheck disable=SC2317
zswap_restore ()
{
  echo "$2" >"$ZSWAP_PARAMS/compressor"
  echo "$1" >"$ZSWAP_PARAMS/enabled"
}

# VmRSS of PID in bytes (0 if it is gone).
rss_bytes ()
{
  local kib
  kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
  echo $((${kib:-0} * 1024))
}

# Scenario state, set by setup_device (in the scenario's subshell).
DEVS=() LADDER_WINDOWS=() FOLLOW_SOCKET=
DEV=
DEV_FILE=
DAEMON_PID=
NBDFUSE_PID=
ZRAM=
ZSWAP=
WORK=

# start_nbdkit PLUGIN ARG…: nbdkit on a Unix socket, nbdfuse mounting it as
# $WORK/mnt/dev (the same set-up as tests/swap/test-swap.sh).
start_nbdkit ()
{
  local log=$WORK/daemon.log
  nbdkit --foreground --exit-with-parent --tls=off --unix "$WORK/sock" \
    --pidfile "$WORK/nbdkit.pid" "$@" 2>"$log" &
  DAEMON_PID=$!
  cleanup_push stop_daemon "$DAEMON_PID"
  wait_for "[[ -s $WORK/nbdkit.pid ]]" 20 || bail_out "nbdkit $1 did not start: $(cat "$log")"
  nbdfuse -P "$WORK/nbdfuse.pid" "$WORK/mnt/dev" --unix "$WORK/sock" 2>>"$log" &
  cleanup_push fuse_unmount "$WORK/mnt" $!
  wait_for "[[ -s $WORK/nbdfuse.pid ]]" 20 || bail_out "nbdfuse did not mount"
  NBDFUSE_PID=$(<"$WORK/nbdfuse.pid")
  DEV_FILE=$WORK/mnt/dev
}

# start_cswap_fuse OPTION=VALUE…  ($CSWAP_FUSE_ARGS: more arguments, split
# on spaces, such as --threads=2, for experiments)
start_cswap_fuse ()
{
  local log=$WORK/daemon.log args=() option
  for option in "$@"; do args+=(-o "$option"); done
  # shellcheck disable=SC2206  # split on purpose
  args+=(${CSWAP_FUSE_ARGS:-})
  "$cswap_fuse" -f "${args[@]}" "$WORK/mnt" 2>"$log" &
  DAEMON_PID=$!
  cleanup_push fuse_unmount "$WORK/mnt" "$DAEMON_PID"
  wait_for "[[ -e $WORK/mnt/swap ]]" 20 || bail_out "cswap-fuse did not mount: $(cat "$log")"
  DEV_FILE=$WORK/mnt/swap
}

# start_zram ALGORITHM [MEM_LIMIT_BYTES]: a zram device of our own.
start_zram ()
{
  local algorithm=$1 mem_limit=${2:-} id sysfs
  [[ -e /sys/class/zram-control/hot_add ]] || skip_all "no zram (/sys/class/zram-control)"
  id=$(cat /sys/class/zram-control/hot_add) || bail_out "zram hot_add failed"
  cleanup_push zram_hot_remove "$id"
  ZRAM=zram$id
  sysfs=/sys/block/$ZRAM
  grep -qw -- "$algorithm" "$sysfs/comp_algorithm" \
    || skip_all "$ZRAM has no $algorithm (has: $(cat "$sysfs/comp_algorithm"))"
  cleanup_push zram_reset "$ZRAM"
  echo "$algorithm" >"$sysfs/comp_algorithm" || bail_out "cannot set $ZRAM comp_algorithm"
  echo "$device_size" >"$sysfs/disksize" || bail_out "cannot set $ZRAM disksize"
  if [[ -n $mem_limit ]]; then
    echo "$mem_limit" >"$sysfs/mem_limit" || bail_out "cannot set $ZRAM mem_limit"
  fi
  DEV=/dev/$ZRAM
}

# start_zswap COMPRESSOR: the kernel's zswap (its defaults otherwise: the
# zsmalloc pool up to max_pool_percent of RAM) in front of a swap file in
# /var/tmp, a real disk, which takes what zswap rejects or writes back.
start_zswap ()
{
  local compressor=$1
  [[ -w $ZSWAP_PARAMS/enabled ]] || skip_all "no zswap ($ZSWAP_PARAMS)"
  cleanup_push zswap_restore "$(<"$ZSWAP_PARAMS/enabled")" \
    "$(<"$ZSWAP_PARAMS/compressor")"
  echo "$compressor" >"$ZSWAP_PARAMS/compressor" 2>/dev/null \
    || skip_all "zswap has no $compressor"
  echo Y >"$ZSWAP_PARAMS/enabled" || bail_out "cannot enable zswap"
  DEV=$(mktemp /var/tmp/cswap-bench-zswap.XXXXXX) || bail_out "mktemp /var/tmp"
  cleanup_push rm -f "$DEV"
  fallocate -l "$device_size" "$DEV" || bail_out "fallocate $DEV"
  ZSWAP=yes
}

# thin_backing_options: a thin backing file in /var/tmp (a real disk)
# for pages read back, as cswap options.
thin_backing_options ()
{
  local backing
  backing=$(mktemp /var/tmp/cswap-bench-backing.XXXXXX) || bail_out "mktemp /var/tmp"
  cleanup_push rm -f "$backing"
  echo "backing=$backing backing-size=$device_size backing-prealloc=no read-writeback=yes"
}

# setup_device NAME [OPTION=VALUE…]: sets DEV (a block device) and, for
# userspace devices, DAEMON_PID (the process holding the data) and
# NBDFUSE_PID.  Extra options go to cswap (both front ends).
setup_device ()
{
  local name=$1; shift
  WORK=$(mktemp -d "$CLEANUP_DIR/$name.XXXXXX") || bail_out "mktemp -d"
  mkdir -p "$WORK/mnt"
  local follow=()
  if [[ $name == *-follow ]]; then
    set_follow_socket "$@"
    follow=("ctl=$FOLLOW_SOCKET")
  fi
  case $name in
    cswap-nbdkit)  start_nbdkit "$plugin" size=$device_size ctl=none "$@" ;;
    cswap-fuse|cswap-fuse-tier|cswap-fuse-follow)
                   start_cswap_fuse size=$device_size ctl=none transport=classic "$@" \
                     "${follow[@]}" ;;
    cswap-fuse-uring|cswap-fuse-uring-disk|cswap-fuse-uring-follow)
      # FUSE over io_uring: the caller has switched enable_uring on.
      [[ $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null) == Y ]] \
        || skip_all "FUSE over io_uring is off (/sys/module/fuse/parameters/enable_uring)"
      # -disk: a thin backing file that takes the pages the kernel reads.
      [[ $name != *-disk ]] || set -- "$@" $(thin_backing_options)
      start_cswap_fuse size=$device_size ctl=none transport=uring "$@" \
        "${follow[@]}" ;;
    nbdkit-zstd)   start_nbdkit memory size=$device_size allocator=zstd ;;
    nbdkit-sparse) start_nbdkit memory size=$device_size allocator=sparse ;;
    nbdkit-null)   start_nbdkit null size=$device_size ;;
    zram-lz4)      start_zram lz4 ;;
    zram-lzo-rle)  start_zram lzo-rle ;;
    zram-limited)  start_zram lz4 "${1:?mem_limit}" ;;
    zswap-lzo-rle) start_zswap lzo-rle ;;
    loop-tmpfs)
      # The loop layer alone: a dio loop over a file in RAM (tmpfs takes
      # O_DIRECT since Linux 6.6; attach_loop bails out where it does not).
      DEV_FILE=$(mktemp /dev/shm/cswap-bench-loop.XXXXXX) || bail_out "mktemp /dev/shm"
      cleanup_push rm -f "$DEV_FILE"
      truncate -s $((block_pages * 4096)) "$DEV_FILE" || bail_out "truncate $DEV_FILE"
      ;;
    loop-zram)
      # The loop layer in front of zram: how fast swap can be through a
      # loop device when the store behind it is as fast as the kernel's.
      start_zram lz4
      DEV_FILE=$DEV ;;
    *) bail_out "unknown device $name" ;;
  esac
  if [[ -n $DEV_FILE && $name == cswap-fuse* && ${ladder_step:-0} != 0 ]]; then
    attach_ladder
  elif [[ -n $DEV_FILE ]]; then
    DEV=$(attach_loop "$DEV_FILE") || exit
    # Experiments: LOOP_QUEUE="rq_affinity=0 …" sets the loop device's
    # block queue attributes.
    local setting
    for setting in ${LOOP_QUEUE:-}; do
      echo "${setting#*=}" >"/sys/block/${DEV#/dev/}/queue/${setting%%=*}" \
        || bail_out "cannot set $setting on $DEV"
    done
  fi
}

# attach_ladder: DEVS, the loop devices of cswap(8)'s ladder over
# DEV_FILE (its own functions, so that the bench measures what `cswap up`
# builds); DEV is the first.
attach_ladder ()
{
  local windows offset length dev
  # shellcheck source=/dev/null  # the configured helper, in the build tree
  windows=$(source "$build/systemd/cswap" \
    && ladder_windows "$(stat -c %s "$DEV_FILE")" "$(size_bytes "$ladder_step")") \
    || bail_out "cannot compute the ladder ($build/systemd/cswap)"
  while read -r offset length; do
    dev=$(losetup --direct-io=on --show -f --offset "$offset" \
            --sizelimit "$length" "$DEV_FILE") || bail_out "losetup $DEV_FILE failed"
    cleanup_push losetup -d "$dev"
    DEVS+=("$dev")
    LADDER_WINDOWS+=("$offset:$length")
  done <<<"$windows"
  DEV=${DEVS[0]}
}

# set_follow_socket OPTION…: FOLLOW_SOCKET, the control socket a -follow
# device's ladder is handed over on: the caller's ctl= if it gave one (the
# last, as the daemon takes it), else one in WORK.
set_follow_socket ()
{
  local option
  FOLLOW_SOCKET=$WORK/ctl.sock
  for option; do [[ $option != ctl=* ]] || FOLLOW_SOCKET=${option#ctl=}; done
}

# swap_off_if_on DEV: swap_off, for a ladder step the daemon may or may not
# have swapped on.
swap_off_if_on ()
{
  ! grep -q "^$(readlink -f "$1") " /proc/swaps || swap_off "$1"
}

# follow_ladder: the first step of DEVS is swap and the daemon follows the
# swap in use with the others (mkswapped, as `cswap up` leaves them), in
# ladder order at descending priorities.  The daemon stops following
# before the steps go off, so that no swapon of its own races ours.
follow_ladder ()
{
  local i ctl=("$build/control/cswapctl" --socket "$FOLLOW_SOCKET")
  [[ ${#LADDER_WINDOWS[@]} -gt 1 ]] || bail_out "a -follow device needs a ladder (LADDER_STEP)"
  swap_on "${DEVS[0]}" 100
  for i in "${!DEVS[@]}"; do
    ((i > 0)) || continue
    mkswap "${DEVS[$i]}" >/dev/null || bail_out "mkswap ${DEVS[$i]} failed"
    cleanup_push swap_off_if_on "${DEVS[$i]}"
  done
  cleanup_push "${ctl[@]}" ladder stop
  for i in "${!DEVS[@]}"; do
    "${ctl[@]}" ladder add "${DEVS[$i]}" "${LADDER_WINDOWS[$i]%:*}" \
      "${LADDER_WINDOWS[$i]#*:}" $((100 - i)) >/dev/null \
      || bail_out "cswapctl ladder add ${DEVS[$i]} failed"
  done
  "${ctl[@]}" ladder follow "${LADDER_HEADROOM:-32M}" ${LADDER_FLOOR:+"$LADDER_FLOOR"} >/dev/null \
    || bail_out "cswapctl ladder follow failed"
}

# swap_on_devices: every device of DEVS is swap, the first at priority 100
# and each next one lower; for a -follow device, the first, and the
# daemon follows with the others (follow_ladder).
swap_on_devices ()
{
  local i
  [[ -z ${FOLLOW_SOCKET:-} ]] || { follow_ladder; return; }
  [[ ${#DEVS[@]} -gt 0 ]] || DEVS=("$DEV")
  for i in "${!DEVS[@]}"; do
    swap_on "${DEVS[$i]}" $((100 - i))
  done
}

# swapped_kib FILE: the KiB in use on DEVS in FILE, a copy of /proc/swaps.
swapped_kib ()
{
  awk -v ours=" ${DEVS[*]:-$DEV} " 'index(ours, " " $1 " ") { kib += $4 }
    END { print kib + 0 }' "$1" 2>/dev/null
}

# A command for sh that snapshots the device's memory into $WORK/snap.*.
snapshot_cmd ()
{
  # sh's parent is the workload (swap-workload or blockio) that runs it.
  local cmd="cat /proc/swaps >$WORK/snap.swaps; grep ^VmSwap /proc/\$PPID/status >$WORK/snap.vmswap"
  [[ -z $DAEMON_PID ]] || cmd+="; grep ^VmRSS /proc/$DAEMON_PID/status >$WORK/snap.daemon"
  [[ -z $NBDFUSE_PID ]] || cmd+="; grep ^VmRSS /proc/$NBDFUSE_PID/status >$WORK/snap.nbdfuse"
  [[ -z $ZRAM ]] || cmd+="; cat /sys/block/$ZRAM/mm_stat >$WORK/snap.mm_stat"
  [[ -z $ZSWAP ]] || cmd+="; grep -E '^Zswap(ped)?:' /proc/meminfo >$WORK/snap.zswap; grep -E '^zswp(out|wb) ' /proc/vmstat >>$WORK/snap.zswap"
  echo "$cmd"
}

# snap_rss FILE: bytes from a "VmRSS: N kB" snapshot (null if none).
snap_rss ()
{
  if [[ -s $1 ]]; then awk '{ print $2 * 1024 }' "$1"; else echo null; fi
}

# memory_json RSS0_DAEMON RSS0_NBDFUSE STORED_BYTES: the device's memory at
# the snapshot as JSON fields.  STORED_BYTES is what the device holds in
# original bytes (userspace devices); zram reports its own.  Also the
# memory per byte the workload had swapped out (its VmSwap at the
# snapshot): what a user pays per byte of memory moved out.
memory_json ()
{
  local rss0=$1 rss0_fuse=$2 stored=$3 rss1 rss1_fuse swapped
  swapped=$(snap_rss "$WORK/snap.vmswap")
  if [[ -n $ZRAM ]]; then
    local orig compr used _
    if [[ -s $WORK/snap.mm_stat ]]; then
      read -r orig compr used _ <"$WORK/snap.mm_stat"
      jq -n --argjson o "$orig" --argjson c "$compr" --argjson u "$used" \
        --argjson w "$swapped" \
        '{mem_source: "zram mm_stat", stored_bytes: $o, compr_data_size: $c,
          mem_used_bytes: $u,
          mem_per_stored_byte: (if $o > 0 then $u / $o else null end),
          workload_swapped_bytes: $w,
          mem_per_swapped_byte: (if $w != null and $w > 0 then $u / $w else null end)}'
    else
      echo '{"mem_source":"zram mm_stat","mem_per_stored_byte":null}'
    fi
    return
  fi
  if [[ -n $ZSWAP ]]; then
    # Global figures: nothing else swaps while the benchmark runs.
    if [[ -s $WORK/snap.zswap ]]; then
      awk '$1 == "Zswap:" { u = $2 * 1024 } $1 == "Zswapped:" { o = $2 * 1024 }
           $1 == "zswpwb" { wb = $2 }
           END { printf "%d %d %d\n", u, o, wb }' "$WORK/snap.zswap" | {
        read -r used orig written_back
        jq -n --argjson u "$used" --argjson o "$orig" --argjson wb "$written_back" \
          --argjson w "$swapped" \
          '{mem_source: "zswap /proc/meminfo", stored_bytes: $o, mem_used_bytes: $u,
            mem_per_stored_byte: (if $o > 0 then $u / $o else null end),
            zswap_written_back_pages: $wb,
            workload_swapped_bytes: $w,
            mem_per_swapped_byte: (if $w != null and $w > 0 then $u / $w else null end)}'
      }
    else
      echo '{"mem_source":"zswap /proc/meminfo","mem_per_stored_byte":null}'
    fi
    return
  fi
  if [[ -z $DAEMON_PID ]]; then
    echo '{"mem_source":"none"}'
    return
  fi
  rss1=$(snap_rss "$WORK/snap.daemon")
  rss1_fuse=$(snap_rss "$WORK/snap.nbdfuse")
  jq -n --argjson r0 "$rss0" --argjson r1 "$rss1" --argjson f0 "${rss0_fuse:-null}" \
    --argjson f1 "$rss1_fuse" --argjson s "$stored" --argjson w "$swapped" \
    '{mem_source: "daemon VmRSS growth", stored_bytes: $s,
      daemon_rss_before: $r0, daemon_rss_after: $r1,
      mem_used_bytes: (if $r1 != null then $r1 - $r0 else null end),
      mem_per_stored_byte: (if $r1 != null and $s > 0 then ($r1 - $r0) / $s else null end),
      nbdfuse_rss_growth_bytes: (if $f0 != null and $f1 != null then $f1 - $f0 else null end),
      nbdfuse_mem_per_stored_byte: (if $f0 != null and $f1 != null and $s > 0
                                    then ($f1 - $f0) / $s else null end),
      workload_swapped_bytes: $w,
      mem_per_swapped_byte: (if $r1 != null and $w != null and $w > 0
                             then ($r1 - $r0) / $w else null end)}'
}

# run_fio DEV PAGES SECONDS PREFIX: fio randread QD1 over the first PAGES
# pages of DEV; prints JSON fields PREFIX_iops, PREFIX_p50_us, … ({} if fio
# failed).
run_fio ()
{
  local dev=$1 pages=$2 seconds=$3 prefix=$4 json=$WORK/fio-$4.json
  if ! timeout $((seconds + 60)) fio --name=randread --filename="$dev" \
         --direct=1 --rw=randread --bs=4k --ioengine=psync --iodepth=1 \
         --numjobs=1 --size=$((pages * 4096)) --runtime="$seconds" --time_based \
         --norandommap --randrepeat=0 --output-format=json --output="$json" \
         >>"$log" 2>&1; then
    note "fio on $dev failed"
    echo '{}'
    return
  fi
  jq --arg p "$prefix" '.jobs[0].read as $r | $r.clat_ns.percentile as $pc |
    {($p + "_iops"): ($r.iops | round),
     ($p + "_p50_us"): ($pc["50.000000"] / 1000),
     ($p + "_p99_us"): ($pc["99.000000"] / 1000),
     ($p + "_p999_us"): ($pc["99.900000"] / 1000)}' "$json" 2>/dev/null || echo '{}'
}

# The daemon's exit stats line ("cswap: stats k=v …") as a JSON object.
daemon_stats_json ()
{
  local line
  line=$(grep -h -e '^cswap: stats' -e '^cswap: latency' "$WORK/daemon.log" 2>/dev/null \
           | tail -n 2 | sed 's/^cswap: [a-z]* //' | tr '\n' ' ')
  [[ -n $line ]] || { echo null; return; }
  tr ' ' '\n' <<<"$line" | grep '=' \
    | jq -R 'split("=") | {(.[0]): (.[1] | tonumber? // .)}' | jq -s 'add'
}

# scenario NAME FUNCTION ARG…: runs FUNCTION in a subshell whose exit (a
# skip, a bail-out, the end) runs the cleanup stack; a skip or failure is
# recorded as a JSON line, and the run goes on with the next scenario.
scenario ()
{
  local bench=$1 device=$2 status reason log_lines; shift 2
  note "$bench $device"
  log_lines=$(wc -l <"$log")
  (
    trap cleanup_run_now EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    "$@"
  )
  status=$?
  cleanup_run_now
  if [[ $status -eq 130 || $status -eq 143 ]]; then
    exit "$status"
  fi
  if [[ $status -ne 0 ]]; then
    reason=$(tail -n +$((log_lines + 1)) "$log" \
               | grep -E '^(1\.\.0 # SKIP|Bail out!)' | tail -n 1)
    [[ $status -eq 77 ]] || reason="exit status $status${reason:+: $reason}"
    emit "$(jq -n --arg b "$bench" --arg d "$device" --arg r "${reason:-exit $status}" \
      '{bench: $b, device: $d, skipped: $r}')"
  fi
  return 0
}
