# shellcheck shell=bash
# cswap helper: the configuration: the service keys from cswap-fuse --check-config's
# listing, and the checks every command starts with.
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# Reads the service keys from $merged_config, cswap-fuse's listing of
# $config and its drop-ins: frontend, priority, mountpoint, the ladder's
# (ladder-step, ladder-online, ladder-headroom, ladder-floor), the machine settings,
# ctl, the control socket, the remote device's (remote, remote-*), and
# backing and backing-size (backing.sh chooses a file where none is named).
read_config ()
{
  local line key value
  # The defaults of config-file.h.
  frontend=auto priority=100 mountpoint=/run/cswap/mnt ladder_step=64M
  ladder_online=auto ladder_headroom=32M ladder_floor=auto ladder_online_auto=0
  halt_poll=auto min_free=auto page_cluster=auto zswap=off
  remote='' remote_port=10809 remote_export='' remote_connections=1
  remote_timeout=0 remote_persist=0 remote_certfile='' remote_keyfile='' remote_cacertfile=''
  remote_tlshostname='' backing='' backing_size=''
  socket=$state_dir/cswap.sock
  while IFS= read -r line || [[ -n $line ]]; do
    uncommented "$line"
    line=$REPLY
    [[ $line == *=* ]] || continue
    trimmed "${line%%=*}"
    key=$REPLY
    trimmed "${line#*=}"
    value=$REPLY
    case $key in
      frontend) frontend=$value ;;
      priority) priority=$value ;;
      mountpoint) mountpoint=$value ;;
      ladder-step) ladder_step=$value ;;
      ladder-online) ladder_online=$value ;;
      ladder-headroom) ladder_headroom=$value ;;
      ladder-floor) ladder_floor=$value ;;
      halt-poll) halt_poll=$value ;;
      min-free) min_free=$value ;;
      page-cluster) page_cluster=$value ;;
      zswap) zswap=$value ;;
      ctl) socket=$value ;;
      backing) backing=$value ;;
      backing-size) backing_size=$value ;;
      remote|remote-port|remote-export|remote-connections|remote-timeout|remote-persist|remote-certfile|remote-keyfile|remote-cacertfile|remote-tlshostname)
        printf -v "${key//-/_}" '%s' "$value" ;;
    esac
  done <<<"$merged_config"
  resolve_frontend
  if [[ $ladder_online == auto ]]; then
    ladder_online_auto=1 ladder_online=$(auto_ladder_online)
  fi
  [[ $ladder_floor != auto ]] || ladder_floor=$(auto_ladder_floor)
}

# uncommented LINE: LINE less its comment (from a # at its start or after
# a blank), in REPLY.  This and trimmed are bash alone: every command
# reads the configuration, and under qemu's TCG the three seds a line
# cost made up much of cswap.service's start (tests/trixie/test-trixie-vm.sh).
uncommented ()
{
  local rest=$1 before
  REPLY=
  while [[ $rest == *'#'* ]]; do
    before=${rest%%'#'*}
    if [[ -z $REPLY$before || $before == *[[:space:]] ]]; then
      REPLY+=$before
      return
    fi
    REPLY+=$before'#'
    rest=${rest#*'#'}
  done
  REPLY+=$rest
}

# trimmed TEXT: TEXT without its leading and trailing blanks, in REPLY.
trimmed ()
{
  REPLY=${1#"${1%%[![:space:]]*}"}
  REPLY=${REPLY%"${REPLY##*[![:space:]]}"}
}

# auto_ladder_floor: what ladder-floor = auto means: min(RAM / 2, 4 GiB),
# in bytes, the swap a default zram-generator device gives, so that with
# the ladder following, the kernel's overcommit heuristic (no one
# allocation above RAM plus the swap online) allows what it would there.
auto_ladder_floor ()
{
  local kib
  kib=$(($(mem_total_kib) / 2))
  ((kib <= 4 << 20)) || kib=$((4 << 20))
  echo $((kib * 1024))
}

# mem_total_kib: the machine's RAM, MemTotal in $meminfo (0 if unreadable).
mem_total_kib ()
{
  awk '$1 == "MemTotal:" { kib = $2 } END { print kib + 0 }' "$meminfo" 2>/dev/null
}

# resolve_frontend: frontend = auto made ublk or fuse, with the reason in
# $frontend_why (`cswap check` and `status` print it).  ublk where the
# kernel has its driver (/dev/ublk-control, or `modprobe ublk_drv` makes
# it: Debian 13's 6.12, bookworm-backports', 7.x): a swap-in is two
# wake-ups, the faulting task to the daemon and back, with no loop worker
# in between.  Else fuse, not nbd even where the nbd driver is: in the
# 160 MiB VM the nbd path took 2.29-2.65x zram's time on gcc where
# cswap-fuse took 1.71-1.78x (doc/design.md).
resolve_frontend ()
{
  frontend_why="frontend = $frontend in $config"
  [[ $frontend == auto ]] || return 0
  if [[ ! -x $cswap_ublk ]]; then
    frontend=fuse frontend_why="auto: fuse ($cswap_ublk is not installed)"
  elif [[ -e $dev_dir/ublk-control ]] || { [[ $(id -u) == 0 ]] && modprobe ublk_drv 2>/dev/null && [[ -e $dev_dir/ublk-control ]]; }; then
    frontend=ublk frontend_why="auto: ublk (this kernel has the ublk driver: $dev_dir/ublk-control)"
  else
    frontend=fuse frontend_why="auto: fuse (this kernel has no ublk driver: no $dev_dir/ublk-control, modprobe ublk_drv failed)"
  fi
}

# auto_ladder_online: what ladder-online = auto means for this
# configuration (config-file.h): follow where there is a ladder to follow
# and a control socket to hand it over, all otherwise; and all where the
# daemon gets a backing file (backing_settle_ladder, once it is chosen).
auto_ladder_online ()
{
  if [[ $frontend != remote && $socket != none ]] \
     && (($(size_bytes "$ladder_step") > 0)); then
    echo follow
  else
    echo all
  fi
}

check_config ()
{
  [[ -x $cswap_fuse ]] || die $EXIT_FAILED "$cswap_fuse: not found (is cswap installed?)"
  if ! merged_config=$("$cswap_fuse" --check-config "$config" 2>&1); then
    warn "invalid configuration: ${merged_config#cswap-fuse: }"
    exit $EXIT_USAGE
  fi
  read_config
}

# cswap=0 is on the kernel command line (the unit's condition,
# ConditionKernelCommandLine=!cswap=0, looks for the same word).
kernel_says_off ()
{
  local words=() word
  # read fails at an end of file without a newline, having read the words.
  [[ -r $proc_cmdline ]] && read -r -a words <"$proc_cmdline"
  for word in "${words[@]}"; do
    [[ $word == cswap=0 ]] && return 0
  done
  return 1
}

# kernel.shm_rmid_forced=1: the kernel destroys a System V segment once
# its creator is gone and nothing has it attached, so cswap-ublk's store
# does not outlive a killed daemon (store-segment.h).
shm_removal_forced ()
{
  [[ $(cat "$procsys/kernel/shm_rmid_forced" 2>/dev/null) == 1 ]]
}

require_root ()
{
  [[ $(id -u) -eq 0 ]] || die $EXIT_FAILED "$1 needs root"
}
