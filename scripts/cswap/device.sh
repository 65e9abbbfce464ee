# shellcheck shell=bash
# cswap helper: the block devices: attach and swapon (the ladder's loop
# devices, or its nbd devices), swapoff and detach, and the swap they hold.
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# free_nbd_device: the first /dev/nbdN (in N's order) no client holds.
free_nbd_device ()
{
  local dev
  while read -r dev; do
    [[ -e $dev ]] || continue
    if [[ $(cat "$dev/size") == 0 && ! -e $dev/pid ]]; then
      echo "/dev/${dev##*/}"
      return 0
    fi
  done < <(printf '%s\n' /sys/block/nbd* | sort -V)
  return 1
}

# connect_nbd PID [OFFSET LENGTH]: a free nbd device connected to the
# daemon's whole device, or to its window export of LENGTH bytes from
# OFFSET (a step of the ladder, nbd-window.h); prints it.
connect_nbd ()
{
  local dev export=${2:+window:$2:$3}
  dev=$(free_nbd_device) || { warn "no free /dev/nbdN (is the nbd module loaded? nbds_max= sets how many)"; return 1; }
  nbd-client -unix "$(served_path "$1")" "$dev" -block-size 4096 ${export:+-N "$export"} >/dev/null \
    || { warn "nbd-client $dev ${export:+(export $export) }failed"; return 1; }
  echo "$dev"
}

# served_size: the bytes of the device the daemon serves, from its
# control socket.
served_size ()
{
  "$cswapctl" --socket "$socket" --output DISKSIZE --bytes --noheadings stats
}

# attach_windows SIZE CMD ARG…: a block device for each window of the
# ladder over SIZE bytes, made by CMD ARG… OFFSET LENGTH, which prints it;
# records devices=… and windows=… as each one exists.  Returns 0, or 1
# after detaching those it made.
attach_windows ()
{
  local size=$1 dev offset length windows=()
  shift
  while read -r offset length; do
    if ! dev=$("$@" "$offset" "$length"); then
      detach_devices
      return 1
    fi
    devices+=("$dev")
    windows+=("$offset:$length")
    state_set devices "${devices[*]}"
    state_set windows "${windows[*]}"
  done < <(ladder_windows "$size" "$(size_bytes "$ladder_step")")
  # No window read (the process substitution failed: no /dev/fd).
  [[ ${#devices[@]} -gt 0 ]] || { warn "no device attached: no window of the ladder read"; return 1; }
}

# allow_ublk_disks DEV…: lets this service open the ublk disks the
# daemon made.  cswap.service's device policy cannot name them ahead:
# they are made at start, in the block major every disk without one of
# its own shares ("blkext", 259: every NVMe namespace too), so the unit
# allows none of that major and each disk is added here by name once it
# exists, before mkswap and swapon open it (systemctl set-property
# --runtime: systemd rebuilds the service's device filter at once; the
# grant lasts until reboot, and a name missing at a later start is
# skipped).  Only where a disk cannot be opened and this runs in a
# service: outside one (`cswap up` from a shell) there is no policy.
# Returns 1 (having warned) when a disk stays closed.
allow_ublk_disks ()
{
  local dev unit props=()
  for dev; do
    { : <"$dev"; } 2>/dev/null || props+=("DeviceAllow=$dev rw")
  done
  [[ ${#props[@]} -gt 0 ]] || return 0
  unit=$(sed -n 's|^0::/.*/\([^/]*\.service\)$|\1|p' /proc/self/cgroup)
  [[ -n $unit ]] || { warn "cannot open ${props[*]#DeviceAllow=} (and not in a service)"; return 1; }
  systemctl set-property --runtime "$unit" "${props[@]}" \
    || { warn "systemctl set-property $unit ${props[*]} failed"; return 1; }
  for dev; do
    { : <"$dev"; } 2>/dev/null || { warn "$dev: still cannot open it under $unit"; return 1; }
  done
}

# attach_device PID: makes the block devices (a loop device over each
# window of the ladder, or an nbd device connected to each) and turns
# swap on, the first at $priority and each next one lower; with
# ladder-online = follow the first only, and the daemon is handed the
# ladder to swap on the rest as the swap in use needs.  Records
# devices=… and windows=… as each one exists.  Returns 0, or 1 after
# undoing its part.
attach_device ()
{
  local pid=$1 file dev size i offset length
  devices=()
  case $frontend in
    fuse)
      file=$(served_path "$pid")
      size=$(stat -L -c %s "$file") || { warn "cannot stat $file"; return 1; }
      attach_windows "$size" attach_loop "$file" || return 1
      ;;
    ublk)
      # The daemon made them, one per window, in ladder order.
      local windows=()
      mapfile -t devices < "$(served_path "$pid")"
      size=$(served_size) || { warn "cannot ask the daemon its size"; return 1; }
      while read -r offset length; do windows+=("$offset:$length"); done \
        < <(ladder_windows "$size" "$(size_bytes "$ladder_step")")
      [[ ${#devices[@]} -gt 0 && ${#devices[@]} -eq ${#windows[@]} ]] \
        || { warn "cswap-ublk listed ${#devices[@]} devices for ${#windows[@]} windows"; return 1; }
      state_set devices "${devices[*]}"
      state_set windows "${windows[*]}"
      allow_ublk_disks "${devices[@]}" || return 1
      ;;
    nbd)
      command -v nbd-client >/dev/null || { warn "frontend = nbd: nbd-client is not installed"; return 1; }
      modprobe nbd 2>/dev/null
      if [[ $socket != none ]]; then
        size=$(served_size) || { warn "cannot ask the daemon its size"; return 1; }
        attach_windows "$size" connect_nbd "$pid" || return 1
      else
        # Nothing to ask the daemon its size: one device, the whole of it.
        dev=$(connect_nbd "$pid") || return 1
        devices=("$dev")
        state_set devices "$dev"
      fi
      ;;
  esac
  for i in "${!devices[@]}"; do
    dev=${devices[$i]}
    # Every step gets its header now: the daemon swaps them on later.
    if ! mkswap "$dev" >/dev/null; then
      warn "mkswap $dev failed"
      detach
      return 1
    fi
    ((i > 0)) && following && continue
    if ! swap_on_ladder "$i"; then
      warn "swapon $dev failed"
      detach
      return 1
    fi
  done
  following || return 0
  hand_over_ladder && return 0
  # Swap must not run short for want of a follower.
  warn "the daemon could not be handed the ladder: swapping on every step instead"
  state_set ladder_online all
  for ((i = 1; i < ${#devices[@]}; i++)); do
    swap_on_ladder "$i" || { warn "swapon ${devices[$i]} failed"; detach; return 1; }
  done
  return 0
}

# machine_swapon ARG…: swapon ARG… in the machine's mount namespace,
# PID 1's.  The kernel keeps the path swapon opened, mount and all, and
# /proc/swaps shows it as seen from the reader's root.  cswap.service's
# commands each run in a mount namespace of their own (its sandbox; an
# ExecStartPost=+ command too, under systemd 257), which goes when the
# command exits; its /dev mount, detached then, is named from itself
# down.  So the step `cswap attach` turned on was "/loop0" for every
# reader: systemd made a loop0.swap of it, which failed to stop at
# shutdown, the daemon's follower, not finding the step by that name,
# tried to swap it on again every 10 s, and `cswap detach` took it for
# no swap (tests/trixie/test-trixie-vm.sh).  (The follower's own swapons
# name the daemon's /dev, whose namespace lasts as long as the daemon.)
machine_swapon ()
{
  if [[ -e /proc/1/ns/mnt && ! /proc/self/ns/mnt -ef /proc/1/ns/mnt ]]; then
    nsenter --mount=/proc/1/ns/mnt -- swapon "$@"
  else
    swapon "$@"
  fi
}

# swapoff DEV, bounded by $timeout_s; retried, since it fails with ENOMEM
# while a process holding swapped pages is still dying.  Returns 0 if DEV
# is not swap (any more).
swap_off ()
{
  local dev=$1 try limit=()
  is_swap "$dev" || return 0
  [[ $timeout_s -gt 0 ]] && limit=(timeout "$timeout_s")
  say "swapoff $dev (every swapped page comes back into memory; this may take a while)"
  for try in 1 2 3; do
    "${limit[@]}" swapoff "$dev" && return 0
    is_swap "$dev" || return 0
    [[ $try -lt 3 ]] && sleep 2
  done
  return 1
}

# is_ours DEV: DEV is still the device recorded (a loop device over our
# file, or an nbd device), not one reused by somebody else since.
is_ours ()
{
  case $1 in
    /dev/loop*)
      [[ $(losetup -n -O BACK-FILE "$1" 2>/dev/null) == *"$(state_get mountpoint)/swap"* ]] ;;
    /dev/nbd*|/dev/ublkb*) true ;;
    *) false ;;
  esac
}

# Detaches the recorded block devices (swap must be off already), and
# keeps in the state those that would not go.
detach_devices ()
{
  local dev kept=()
  read_devices
  for dev in "${devices[@]}"; do
    is_ours "$dev" || continue
    case $dev in
      /dev/loop*) losetup -d "$dev" || { warn "losetup -d $dev failed"; kept+=("$dev"); } ;;
      /dev/nbd*) nbd-client -d "$dev" >/dev/null 2>&1 || { warn "nbd-client -d $dev failed"; kept+=("$dev"); } ;;
      # cswap-ublk deletes its devices when it stops.
      /dev/ublkb*) ;;
    esac
  done
  if [[ ${#kept[@]} -gt 0 ]]; then
    state_set devices "${kept[*]}"
    return 1
  fi
  state_unset devices
}

# Turns swap off on every recorded device, lowest priority (usually the
# emptiest) first, and detaches them; 0, or EXIT_REFUSED if one stays
# swap: those already turned off are then turned on again, and a ladder
# the daemon followed is handed back to it, so that everything is left up
# as it was.  The daemon stops following first.
detach ()
{
  local i j was_swap=()
  read_devices
  stop_following
  for i in "${!devices[@]}"; do
    is_swap "${devices[$i]}" && was_swap[i]=1
  done
  for ((i = ${#devices[@]} - 1; i >= 0; i--)); do
    swap_off "${devices[$i]}" && continue
    warn "swapoff ${devices[$i]} failed: the device is still swap, so the daemon must"
    warn "keep running (stopping it would kill every process with pages on it)."
    warn "Free memory or stop the processes using swap, then run '$program down' again."
    for ((j = i + 1; j < ${#devices[@]}; j++)); do
      [[ -n ${was_swap[j]:-} ]] || continue
      swap_on_ladder "$j" || warn "swapon ${devices[$j]} again failed: it stays off"
    done
    if following && ! hand_over_ladder; then
      warn "the daemon could not be handed the ladder again: the steps online stay as they are"
    fi
    return $EXIT_REFUSED
  done
  detach_devices || return $EXIT_FAILED
  return 0
}

# The KiB in use on the recorded devices, from /proc/swaps.
swap_used_kib ()
{
  local dev used=0 kib
  read_devices
  for dev in "${devices[@]}"; do
    kib=$(awk -v a="$dev" '$1 == a { print $4 }' /proc/swaps)
    used=$((used + ${kib:-0}))
  done
  echo "$used"
}
