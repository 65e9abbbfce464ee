# shellcheck shell=bash
# cswap helper: what a stopped or dead daemon leaves: its mount, its socket, its
# state, the swap devices nobody can read any more.
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# clear_mount DIR: unmounts whatever is mounted on DIR, a dead FUSE mount
# too (its daemon gone, every access to it fails with ENOTCONN, which is
# why /proc/self/mountinfo is asked and not the directory).
clear_mount ()
{
  is_mounted "$1" || return 0
  fusermount3 -u "$1" 2>/dev/null || fusermount3 -u -z "$1" 2>/dev/null \
    || umount -l "$1"
}

is_mounted ()
{
  awk -v d="$1" '$5 == d { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# The FUSE mount, if the daemon left it (it unmounts on SIGTERM; in a
# private namespace it vanishes with the daemon).
teardown_mount ()
{
  local mnt
  mnt=$(state_get mountpoint)
  [[ $(state_get frontend) == fuse && -n $mnt ]] || return 0
  clear_mount "$mnt"
}

# Once the daemon is stopped or dead: its mount, its control socket (left
# behind when it could not clean up: SIGKILL, a crash) and the state.
clear_leftovers ()
{
  local socket_path
  teardown_mount
  socket_path=$(state_get socket)
  [[ -S $socket_path ]] && rm -f "$socket_path"
  rm -f "$state_file" "$state_file.tmp"
  untune
}

# What a dead daemon left: swap devices that can no longer be read (swapoff
# still takes them off: the kernel marks each page it cannot read back, and
# a process touching one gets SIGBUS), loop devices, a dead FUSE mount,
# ublk devices (the driver stops their disks, but each device and its
# number stay until deleted) and a control socket nobody answers.  Clears
# them all; returns what detach returns.
# swap_on_deleted_disk DEV: DEV's disk was deleted while it was swap:
# /proc/swaps lists "DEV\040(deleted)" (a blank is \040 there, and awk
# reads \\ as one backslash), which no path opens any more, so no swapoff
# can name it.
swap_on_deleted_disk ()
{
  awk -v a="$1\\\\040(deleted)" 'NR > 1 && $1 == a { found = 1 } END { exit !found }' /proc/swaps
}

# live_server: the PID of a live cswap-ublk that serves the recorded
# control socket, or nothing (1).  The PID recorded for a ublk daemon is
# its standby's (ublk-standby.h), whose child serves; with the standby
# alone killed, that server runs on, and is the daemon: its command line
# is the standby's (a fork), --ctl=SOCKET among it.  In bash alone, no
# process per /proc entry (each costs about half a second under TCG).
live_server ()
{
  local socket proc pid comm arg exe
  socket=$(state_get socket)
  [[ $(state_get frontend) == ublk && -n $socket && -x $cswap_ublk ]] || return 1
  exe=$(readlink -f "$cswap_ublk")
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    read -r comm <"$proc/comm" 2>/dev/null || continue
    [[ $comm == cswap-ublk ]] || continue
    daemon_alive "$pid" || continue
    [[ $(readlink -f "$proc/exe") == "$exe" ]] || continue
    while IFS= read -r -d '' arg; do
      [[ $arg == "--ctl=$socket" ]] || continue
      echo "$pid"
      return 0
    done <"$proc/cmdline"
  done
  return 1
}

# recover_dead_daemon: the dead daemon's ublk devices, where they wait
# for a new server (cswap-ublk adds them with user recovery where the
# driver has it), taken over by a new cswap-ublk (--recover) over the
# windows recorded, and the state given its PID.  It adopts the dead
# daemon's store (a System V segment that outlived it), so every page
# swapped before reads back; where it cannot (a store with a backing
# file) its store is new, the pages swapped before are lost (a read of
# one is EIO), and swap goes on.  Either way it says which.  0 once it serves them; 1 where there is nothing to
# take over (another front end, or devices without recovery, whose disks
# the driver deleted), with the new daemon's reason in its log.  Where
# only the standby died, its server serves on (live_server): that server
# is recorded as the daemon, and nothing is started (a --recover would
# wait 10 s for a device served, and the leftovers cleared after it would
# be the live server's socket and state).
recover_dead_daemon ()
{
  local dev ids=() windows new_pid adopted list=$state_dir/ublk-devices log=$state_dir/daemon.log
  [[ $(state_get frontend) == ublk && -x $cswap_ublk ]] || return 1
  if new_pid=$(live_server); then
    say "the daemon of the last 'up' ($(state_get pid)) is gone, but its server ($new_pid) serves on"
    state_set pid "$new_pid"
    return 0
  fi
  read_devices
  windows=$(state_get windows)
  [[ ${#devices[@]} -gt 0 && -n $windows ]] || return 1
  for dev in "${devices[@]}"; do
    [[ $dev == /dev/ublkb* ]] && ! swap_on_deleted_disk "$dev" || return 1
    ids+=("${dev#/dev/ublkb}")
  done
  rm -f "$list"
  setsid "$cswap_ublk" "--ctl=$(state_get socket)" --config "$(state_get config)" \
    --windows "${windows// /,}" --recover "$(IFS=,; echo "${ids[*]}")" \
    --device-list "$list" </dev/null >"$log" 2>&1 &
  new_pid=$!
  if ! wait_for 60 eval "[[ -e $list ]] || ! kill -0 $new_pid 2>/dev/null" \
     || [[ ! -e $list ]]; then
    warn "no new daemon could take over ${devices[*]}: $(tail -n 3 "$log")"
    stop_daemon "$new_pid"
    return 1
  fi
  say "the daemon of the last 'up' ($(state_get pid)) is gone:"
  say "a new daemon ($new_pid) took over ${devices[*]} (ublk user recovery)"
  adopted=$(sed -n "s/^cswap-ublk: adopted the killed daemon's store: \([0-9]*\) pages, \([0-9]*\) lost$/\1 \2/p" "$log")
  if [[ -n $adopted && ${adopted#* } == 0 ]]; then
    say "and its store: every page swapped before is there (${adopted% *} pages)"
  elif [[ -n $adopted ]]; then
    say "and its store, but ${adopted#* } pages were lost (a process touching one"
    say "gets SIGBUS, its read fails with EIO); swapping goes on"
  else
    say "the pages swapped to them before are lost (a process touching one gets"
    say "SIGBUS, its read fails with EIO); swapping goes on"
  fi
  state_set pid "$new_pid"
  state_set manager shell
  return 0
}

clear_dead_daemon ()
{
  local status dev ublk_ids=()
  read_devices
  for dev in "${devices[@]}"; do
    [[ $dev == /dev/ublkb* ]] || continue
    if swap_on_deleted_disk "$dev"; then
      warn "$dev was swap when its daemon died, and the ublk driver removed its disk:"
      warn "the kernel cannot swap it off any more.  Its pages are lost (a process"
      warn "touching one gets SIGBUS), and /proc/swaps lists it until the next boot."
      continue
    fi
    ublk_ids+=("${dev#/dev/ublkb}")
  done
  detach
  status=$?
  [[ $status -eq 0 ]] || return $status
  if ((${#ublk_ids[@]} > 0)); then
    "$cswap_ublk" --delete-dead "${ublk_ids[@]}" >&2 \
      || warn "the ublk devices ${ublk_ids[*]} of the dead daemon stay (see above)"
  fi
  clear_leftovers
}
