# shellcheck shell=bash
# cswap helper: the state file and what it records: the daemon's PID, its
# devices, whether they are swap.
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# The state's lines but KEY's, as the array state_lines.  In bash alone,
# as state_get is: cswap.service's attach reads the state some 20 times,
# and under qemu's TCG each sed or grep it started cost about half a
# second of the unit's start (tests/trixie/test-trixie-vm.sh).
state_lines_but ()
{
  local line
  state_lines=()
  [[ -r $state_file ]] || return 0
  while IFS= read -r line || [[ -n $line ]]; do
    [[ $line == "$1="* ]] || state_lines+=("$line")
  done <"$state_file"
}

# state_get KEY: the value recorded for KEY (the last one), or nothing.
state_get ()
{
  local line value found=
  [[ -r $state_file ]] || return 0
  while IFS= read -r line || [[ -n $line ]]; do
    [[ $line == "$1="* ]] && value=${line#"$1="} found=1
  done <"$state_file"
  [[ -z $found ]] || printf '%s\n' "$value"
}

# state_set KEY VALUE: records KEY (replacing an earlier value).
state_set ()
{
  local tmp=$state_file.tmp state_lines
  state_lines_but "$1"
  { [[ ${#state_lines[@]} -eq 0 ]] || printf '%s\n' "${state_lines[@]}"; echo "$1=$2"; } >"$tmp" \
    && mv -f "$tmp" "$state_file"
}

state_unset ()
{
  [[ -r $state_file ]] || return 0
  local tmp=$state_file.tmp
  grep -v "^$1=" "$state_file" >"$tmp"
  mv -f "$tmp" "$state_file"
}

pid_alive ()
{
  [[ -n $1 ]] && kill -0 "$1" 2>/dev/null
}

# daemon_alive PID: PID runs and is a cswap daemon: not a process that was
# given the PID of one that died, nor a dead one not yet reaped.
daemon_alive ()
{
  local stat
  pid_alive "$1" || return 1
  case $(cat "/proc/$1/comm" 2>/dev/null) in
    cswap-fuse|cswap-ublk|nbdkit) ;;
    *) return 1 ;;
  esac
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != [ZX] ]]
}

# is_swap DEV: DEV is an active swap device.  /proc/swaps names a device
# by the path it was opened at, as seen from the reader's root; one
# opened through a /dev mount no reader can reach is named from that
# mount down ("/loop0" for /dev/loop0: a step an older cswap.service's
# attach swapped on in its own mount namespace, before machine_swapon in
# device.sh).  Missing it, detach took the device down while it was
# still swap, and every page on it was lost at shutdown
# (tests/trixie/test-trixie-vm.sh).
is_swap ()
{
  local real
  [[ -n $1 ]] || return 1
  real=$(readlink -f "$1")
  awk -v a="$1" -v b="$real" -v c="${real#/dev}" \
    'NR > 1 && ($1 == a || $1 == b || $1 == c) { found = 1 } END { exit !found }' /proc/swaps
}

# all_swap DEV…: every DEV is an active swap device (and there is one).
all_swap ()
{
  local dev
  [[ $# -gt 0 ]] || return 1
  for dev; do is_swap "$dev" || return 1; done
}

# ladder_up: the recorded devices are swap as the ladder has them: every
# one, or with ladder-online = follow the first (the daemon swaps the
# others on as the swap in use needs).
ladder_up ()
{
  [[ ${#devices[@]} -gt 0 ]] || return 1
  if [[ $(state_get ladder_online) == follow ]]; then
    is_swap "${devices[0]}"
  else
    all_swap "${devices[@]}"
  fi
}

# The recorded devices that are swap now, in ladder order, one a line.
online_devices ()
{
  local dev
  for dev in "${devices[@]}"; do
    is_swap "$dev" && echo "$dev"
  done
}

# The recorded devices, highest priority first, as the array devices.
read_devices ()
{
  read -ra devices <<<"$(state_get devices)"
}
