# shellcheck shell=bash
# cswap helper: the device ladder (doc/design.md, "The device ladder"): the
# windows over the FUSE file, a direct-I/O loop device over each, their
# swap priorities, and with ladder-online = follow the hand-over to the
# daemon, which then swaps the steps on and off itself as the swap in use
# needs ("Steps that follow the swap in use"; daemon/ladder/ladder-follow.h).
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# size_bytes SIZE: the bytes of a size as cswap.conf(5) writes one (and
# cswap-fuse has checked): digits, an optional k/K, M, G, T, P or E, and
# an optional "iB" or "B".
size_bytes ()
{
  local s=${1%iB} shift=0
  s=${s%B}
  case $s in
    *[kK]) shift=10 ;;
    *M) shift=20 ;;
    *G) shift=30 ;;
    *T) shift=40 ;;
    *P) shift=50 ;;
    *E) shift=60 ;;
  esac
  [[ $shift -eq 0 ]] || s=${s%?}
  echo $((10#$s << shift))
}

# ladder_windows SIZE STEP: "OFFSET LENGTH" lines, the ladder's windows
# over a device of SIZE bytes: STEP, STEP, 2 STEP, 4 STEP…, the last one
# taking the rest (also when the rest would be shorter than a step, or
# after MAX_LADDER_WINDOWS).  STEP 0, or at least SIZE: one window.
readonly MAX_LADDER_WINDOWS=16
ladder_windows ()
{
  local size=$1 step=$2 offset=0 length=$2 count=1
  if ((step == 0 || step >= size)); then
    echo "0 $size"
    return
  fi
  while ((offset < size)); do
    if ((size - offset - length < step || count == MAX_LADDER_WINDOWS)); then
      length=$((size - offset))
    fi
    echo "$offset $length"
    offset=$((offset + length))
    ((count++ == 1)) || length=$((length * 2))
  done
}

# attach_loop FILE OFFSET LENGTH: a direct-I/O loop device over that
# window of FILE; prints it.  A buffered loop keeps an uncompressed copy of
# every swapped page in the page cache: refused rather than pretend to
# compress.
attach_loop ()
{
  local file=$1 offset=$2 length=$3 dev dio
  if ! dev=$(losetup --direct-io=on --show -f --offset "$offset" \
               --sizelimit "$length" "$file"); then
    warn "losetup $file (offset $offset, $length bytes) failed"
    return 1
  fi
  dio=$(cat "/sys/block/${dev#/dev/}/loop/dio" 2>/dev/null)
  if [[ $dio != 1 ]]; then
    warn "$dev: direct I/O is off: refusing to swap to a buffered loop device"
    losetup -d "$dev"
    return 1
  fi
  echo "$dev"
}

# ladder_priority I: the swap priority of step I: the recorded priority
# for the first, one less for each next one, -1 (the kernel's choice) at
# the lowest.  (Recorded, since `down` does not read the configuration,
# which may have changed since.)
ladder_priority ()
{
  local prio=$(($(state_get priority) - $1))
  ((prio >= -1)) || prio=-1
  echo "$prio"
}

# swap_on_ladder I: swapon the recorded device I at its place in the
# ladder.
swap_on_ladder ()
{
  machine_swapon --discard=pages -p "$(ladder_priority "$1")" "${devices[$1]}"
}

# following: the recorded ladder is the daemon's to follow.
following ()
{
  [[ $(state_get ladder_online) == follow ]]
}

# ladder_ctl ARG…: `ladder ARG…` on the recorded daemon's control socket;
# its errors go to stderr.
ladder_ctl ()
{
  "$cswapctl" --socket "$(state_get socket)" ladder "$@" >/dev/null
}

# hand_over_ladder: the recorded steps (devices and windows, in ladder
# order) to the daemon, which then follows the swap in use, at the
# recorded headroom and floor.  0, or 1 after saying why.
hand_over_ladder ()
{
  local i windows floor
  [[ -x $cswapctl ]] || { warn "$cswapctl: not found: the daemon cannot be handed the ladder"; return 1; }
  read -ra windows <<<"$(state_get windows)"
  [[ ${#windows[@]} -eq ${#devices[@]} ]] \
    || { warn "the state has ${#windows[@]} windows for ${#devices[@]} devices"; return 1; }
  # Whatever the daemon had (a refused down hands the ladder over again).
  ladder_ctl stop || return 1
  for i in "${!devices[@]}"; do
    ladder_ctl add "${devices[$i]}" "${windows[$i]%:*}" "${windows[$i]#*:}" \
      "$(ladder_priority "$i")" || return 1
  done
  # A state written before ladder-floor existed has none: no floor.
  floor=$(state_get ladder_floor)
  ladder_ctl follow "$(state_get ladder_headroom)" ${floor:+"$floor"}
}

# stop_following: the daemon stops swapping steps on and off, so that no
# swapon of its own races a swapoff of ours.  Returns 1 (having warned)
# if a live daemon could not be told.
stop_following ()
{
  following && daemon_alive "$(state_get pid)" || return 0
  ladder_ctl stop && return 0
  warn "could not tell the daemon to stop following the swap in use: it may swap a step on again"
  return 1
}
