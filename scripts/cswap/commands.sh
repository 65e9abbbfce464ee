# shellcheck shell=bash
# cswap helper: the commands: cmd_NAME for `cswap NAME`.
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

cmd_check ()
{
  check_config
  kernel_says_off \
    && echo "# cswap=0 is on the kernel command line ($proc_cmdline): cswap.service does not start, and '$program up' refuses"
  if zswap_on; then
    if [[ $zswap == keep ]]; then
      warn_zswap_kept
    else
      echo "# zswap is on ($(zswap_param)): $zswap_twice; '$program up' turns it off while cswap is up (zswap = keep leaves it on)"
    fi
  fi
  if [[ $frontend != remote ]]; then
    echo "# front end: $frontend_why"
    backing_choose
    echo "# backing file: $backing_why"
  fi
  [[ $frontend == ublk ]] && shm_removal_forced \
    && echo "# kernel.shm_rmid_forced=1: the kernel destroys cswap-ublk's store when its daemon dies, so a killed daemon's pages are lost (their reads fail with EIO, SIGBUS for their processes) instead of taken over; 'sysctl kernel.shm_rmid_forced=0' keeps them"
  echo "$merged_config"
}

# frontend = remote: dies where a daemon was asked for.
no_daemon_for_remote ()
{
  [[ $frontend == remote ]] || return 0
  die $EXIT_USAGE "$1: frontend = remote runs no daemon here: '$program up'" \
    "(cswap-remote.service under systemd) connects the kernel's nbd client to" \
    "$(remote_name) and '$program down' disconnects it"
}

cmd_run ()
{
  check_config
  no_daemon_for_remote run
  require_root "run"
  mkdir -p "$state_dir" || exit $EXIT_FAILED
  if [[ $frontend == fuse ]]; then
    mkdir -p "$mountpoint" || exit $EXIT_FAILED
    enable_fuse_uring
  fi
  daemon_command
  exec "${daemon_argv[@]}"
}

# write_state PID MANAGER: a new state file for the daemon PID.
write_state ()
{
  {
    echo "pid=$1"
    echo "frontend=$frontend"
    echo "frontend_why=$frontend_why"
    echo "mountpoint=$mountpoint"
    echo "priority=$priority"
    echo "socket=$socket"
    echo "config=$config"
    echo "manager=$2"
    echo "ladder_online=$ladder_online"
    echo "ladder_headroom=$ladder_headroom"
    echo "ladder_floor=$ladder_floor"
    echo "backing=$backing_path"
    echo "backing_why=$backing_why"
  } >"$state_file"
}

cmd_attach ()
{
  local pid=${given_pid:-${MAINPID:-}} status
  check_config
  no_daemon_for_remote attach
  require_root "attach"
  [[ -n $pid ]] || die $EXIT_USAGE "attach: no daemon PID (--pid PID, or \$MAINPID)"
  mkdir -p "$state_dir" || exit $EXIT_FAILED
  read_devices
  if ladder_up; then
    say "already attached: ${devices[*]}"
    return 0
  fi
  wait_serving "$pid" 60
  status=$?
  [[ $status -eq 0 ]] || die $EXIT_FAILED "the daemon ($pid) is $( ((status == 2)) && echo "gone" || echo "not serving after 60 s")"
  # What `run` chose, chosen again: the same configuration and file.
  backing_choose
  write_state "$pid" "$([[ -n ${INVOCATION_ID:-} ]] && echo systemd || echo shell)"
  attach_device "$pid" || exit $EXIT_FAILED
  say "$(swap_on_what)"
}

# What attach_device turned on, in words.
swap_on_what ()
{
  if following; then
    echo "swap on ${devices[0]} (priority $priority); the daemon follows the swap in use over ${devices[*]} (headroom $ladder_headroom)"
  else
    echo "swap on ${devices[*]} (priority $priority and down)"
  fi
}

cmd_detach ()
{
  require_root "detach"
  # The daemon killed (the unit's ExecStop= runs then too): a swapoff of
  # its ublk devices would wait for a server for ever.  A new one takes
  # them over, and their store, so that swapoff completes (pages it lost,
  # if any, marked bad), and
  # stops once they are off.
  if [[ -e $state_file ]] && ! daemon_alive "$(state_get pid)" && recover_dead_daemon; then
    detach || return $?
    stop_daemon "$(state_get pid)"
    return 0
  fi
  detach
}

cmd_tune ()
{
  check_config
  require_root "tune"
  tune
}

cmd_untune ()
{
  require_root "untune"
  untune
}

# prepare_mountpoint: the mount point exists and nothing is mounted on it;
# a dead FUSE mount left by a killed daemon is cleared.
prepare_mountpoint ()
{
  if is_mounted "$mountpoint"; then
    stat "$mountpoint" >/dev/null 2>&1 \
      && die $EXIT_FAILED "$mountpoint: something is already mounted there"
    say "$mountpoint: a dead FUSE mount (its daemon is gone): unmounting it"
    clear_mount "$mountpoint"
  fi
  mkdir -p "$mountpoint" || exit $EXIT_FAILED
}

# The remote device beside the local one, once that is up.  One that
# fails leaves the local device up: swap that is there beats none.
remote_beside_local ()
{
  remote_wanted || return 0
  remote_bring_up && return 0
  warn "the local device is up, the remote one ($(remote_name)) is not:" \
    "'$program remote-up' tries again"
  return 1
}

# The remote device alone, the configuration read: `remote-up`, and `up`
# with frontend = remote.
remote_alone_up ()
{
  remote_wanted || die $EXIT_USAGE "remote-up: no remote = HOST in $config"
  remote_bring_up || exit $EXIT_FAILED
  [[ $frontend == remote ]] && tune
  return 0
}

# `remote-up`: cswap-remote.service's ExecStart=.
cmd_remote_up ()
{
  check_config
  require_root "remote-up"
  remote_alone_up
}

# `remote-down`: swap off and disconnect the remote device alone.
cmd_remote_down ()
{
  require_root "remote-down"
  [[ -e $state_dir/remote ]] || { say "remote not up"; return 0; }
  remote_detach || exit $?
  [[ -e $state_file ]] || untune
  say "remote down"
}

cmd_up ()
{
  local pid status log=$state_dir/daemon.log remote_status=0
  check_config
  require_root "up"
  if [[ $frontend == remote ]]; then
    remote_alone_up
    say "take it down with: $program${config_given:+ -c $config} down"
    return 0
  fi
  read_devices
  pid=$(state_get pid)
  if ladder_up && daemon_alive "$pid"; then
    say "already up: ${devices[*]} (daemon $pid)"
    remote_beside_local || return $EXIT_FAILED
    return 0
  fi
  if [[ -e $state_file ]]; then
    daemon_alive "$pid" \
      && die $EXIT_FAILED "$state_file exists but the device is not fully up: run '$program down' first"
    if recover_dead_daemon; then
      read_devices
      say "up again: ${devices[*]}, daemon $(state_get pid)"
      return 0
    fi
    say "the daemon of the last 'up' (${pid:-no PID}) is gone: clearing what it left"
    clear_dead_daemon
    status=$?
    [[ $status -eq 0 ]] || exit $status
  fi
  mkdir -p "$state_dir" || exit $EXIT_FAILED
  if [[ $frontend == fuse ]]; then
    prepare_mountpoint
    enable_fuse_uring
  fi
  daemon_command
  # Its own session, so a ^C in this shell does not reach it later.
  setsid "${daemon_argv[@]}" </dev/null >"$log" 2>&1 &
  pid=$!
  write_state "$pid" shell
  wait_serving "$pid" 60
  status=$?
  if [[ $status -ne 0 ]]; then
    warn "the daemon did not start: $(tail -n 5 "$log")"
    stop_daemon "$pid"
    clear_leftovers
    exit $EXIT_FAILED
  fi
  if ! attach_device "$pid"; then
    stop_daemon "$pid"
    clear_leftovers
    exit $EXIT_FAILED
  fi
  tune
  say "up: $(swap_on_what), daemon $pid"
  remote_beside_local || remote_status=$EXIT_FAILED
  say "take it down with: $program${config_given:+ -c $config} down"
  return $remote_status
}

cmd_down ()
{
  local pid status remote_was=
  require_root "down"
  # The remote device first: the lowest priority, the coldest pages.
  if [[ -e $state_dir/remote ]]; then
    remote_detach || exit $?
    remote_was=1
  fi
  if [[ ! -e $state_file ]]; then
    untune
    [[ -n $remote_was ]] && { say "down"; return 0; }
    say "not up (no $state_file)"
    return 0
  fi
  [[ -n $remote_was ]] && say "remote down"
  pid=$(state_get pid)
  if ! daemon_alive "$pid"; then
    if recover_dead_daemon; then
      # Taken over: it goes down as any daemon does, swapoff first.
      pid=$(state_get pid)
    else
      say "the daemon (${pid:-no PID}) is gone: clearing what it left"
      clear_dead_daemon
      status=$?
      [[ $status -eq 0 ]] && say "down"
      exit $status
    fi
  fi
  detach
  status=$?
  [[ $status -eq 0 ]] || exit $status
  still_swap && exit $EXIT_REFUSED
  if [[ $(state_get manager) == systemd ]] \
     && command -v systemctl >/dev/null \
     && systemctl is-active --quiet cswap.service 2>/dev/null; then
    # Let systemd stop its own service; its ExecStop finds nothing to do.
    systemctl stop cswap.service || warn "systemctl stop cswap.service failed"
  fi
  stop_daemon "$pid"
  clear_leftovers
  say "down"
}

cmd_status ()
{
  local pid socket_path used online
  if [[ ! -e $state_file ]]; then
    if [[ -e $state_dir/remote ]]; then
      if remote_up; then
        say "active: remote $(remote_get device)"
      else
        say "not active: the remote device is not swap"
      fi
      remote_status_line
      awk -v a="$(remote_get device)" 'NR == 1 || $1 == a' /proc/swaps
      remote_up || exit $EXIT_INACTIVE
      return 0
    fi
    say "not up"
    exit $EXIT_INACTIVE
  fi
  pid=$(state_get pid)
  read_devices
  socket_path=$(state_get socket)
  if ! daemon_alive "$pid"; then
    used=$(swap_used_kib)
    say "not active: the daemon (${pid:-no PID}) is gone: killed or crashed"
    if [[ $used -gt 0 && $(state_get frontend) == ublk ]] \
       && ! swap_on_deleted_disk "${devices[0]}"; then
      say "the $used KiB in swap on ${devices[*]} wait for a new daemon: '$program up'"
      say "takes the devices over with the store the dead one left (ublk user recovery)"
    elif [[ $used -gt 0 ]]; then
      say "the $used KiB in swap on ${devices[*]} are lost: a process that"
      say "touches one of those pages gets SIGBUS (is killed)"
    fi
    say "'$program down' clears what it left ('$program up' does too)"
  elif ladder_up; then
    say "active: ${devices[*]}, $(state_get frontend) daemon $pid (started by $(state_get manager))"
  else
    say "not active: devices ${devices[*]:-none}, daemon $pid running"
  fi
  echo "config:     $(state_get config)"
  [[ -z $(state_get frontend_why) ]] || echo "front end:  $(state_get frontend) ($(state_get frontend_why))"
  echo "mountpoint: $(state_get mountpoint)"
  [[ -z $(state_get backing_why) ]] || echo "backing:    $(state_get backing_why)"
  echo "socket:     $socket_path"
  if following; then
    online=$(online_devices | tr '\n' ' ')
    echo "ladder:     follow, headroom $(state_get ladder_headroom): $(wc -w <<<"$online") of ${#devices[@]} steps online: ${online% }"
  elif ((${#devices[@]} > 1)); then
    echo "ladder:     all ${#devices[@]} steps online"
  fi
  remote_status_line
  awk -v list=" ${devices[*]} $(remote_get device) " 'NR == 1 || index(list, " " $1 " ")' /proc/swaps
  if daemon_alive "$pid" && [[ -x $cswapctl && -S $socket_path ]]; then
    echo
    "$cswapctl" --socket "$socket_path" stats || warn "cswapctl stats failed"
    if following; then
      echo
      "$cswapctl" --socket "$socket_path" ladder || warn "cswapctl ladder failed"
    fi
  fi
  ladder_up && daemon_alive "$pid" || exit $EXIT_INACTIVE
}
