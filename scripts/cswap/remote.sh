# shellcheck shell=bash
# cswap helper: the remote device: the kernel's nbd client connected to a
# cswap server (nbdkit cswap on another machine, one export per client:
# nbdkit-cswap-plugin(1)), swapped on below any local device, so that
# the kernel fills the local one first and the remote takes what is left
# (the coldest pages: the kernel's swap-out order).
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# The remote's settings, from read_config: remote (the server; empty: no
# remote device), remote_port, remote_export, remote_connections,
# remote_timeout and the TLS files.
#
# The remote device keeps its own record, $state_dir/remote (device=,
# name=), apart from the local daemon's state: each comes and goes on its
# own (cswap-remote.service after the network, cswap.service before it),
# and clearing what a dead daemon left must not forget a remote device
# that is still swap.

remote_wanted () { [[ -n $remote ]]; }

# remote_get KEY, remote_set KEY VALUE: the remote device's record.
remote_get () { local state_file=$state_dir/remote; state_get "$1"; }
remote_set () { local state_file=$state_dir/remote; state_set "$1" "$2"; }

# remote_name: the server and export, in words.
remote_name ()
{
  echo "$remote:$remote_port${remote_export:+ export \"$remote_export\"}"
}

# remote_client_args DEV: the command that connects DEV, in the array
# client_args: nbd-client for plain TCP; cswap-connect(8) with TLS, which
# hands the kernel the TLS session with the socket (kernel TLS), where
# nbd-client would keep a proxy process of its own in the swap path; and
# cswap-connect --persist, TLS or not, for remote-persist, whose process
# stays beside the device (never in its path) to replace a connection
# that dies.  Either way the socket is the kernel's.  The block size is
# the page's.
remote_client_args ()
{
  if remote_tls || ((remote_persist > 0)); then
    client_args=("$cswap_connect" "$remote" "$remote_port" "$1")
    [[ -n $remote_export ]] && client_args+=(--export "$remote_export")
    ((remote_connections > 1)) && client_args+=(--connections "$remote_connections")
    ((remote_timeout > 0)) && client_args+=(--timeout "$remote_timeout")
    ((remote_persist > 0)) && client_args+=(--persist "$remote_persist")
    remote_tls || { client_args+=(--no-tls); return; }
    [[ -n $remote_certfile ]] \
      && client_args+=(--certfile "$remote_certfile" --keyfile "$remote_keyfile")
    [[ -n $remote_cacertfile ]] && client_args+=(--cacertfile "$remote_cacertfile")
    [[ -n $remote_tlshostname ]] && client_args+=(--tlshostname "$remote_tlshostname")
    return
  fi
  client_args=(nbd-client "$remote" "$remote_port" "$1" -block-size 4096)
  [[ -n $remote_export ]] && client_args+=(-name "$remote_export")
  ((remote_connections > 1)) && client_args+=(-connections "$remote_connections")
  ((remote_timeout > 0)) && client_args+=(-timeout "$remote_timeout")
}

remote_tls () { [[ -n $remote_certfile || -n $remote_cacertfile ]]; }

# remote_attach PRIORITY: connects a free nbd device to the server, makes
# it swap and turns it on at PRIORITY.  Records the device.  Returns 0,
# or 1 after undoing its part.
remote_attach ()
{
  local dev client_args=()
  command -v nbd-client >/dev/null || { warn "remote: nbd-client is not installed"; return 1; }
  modprobe nbd 2>/dev/null
  remote_tls && modprobe tls 2>/dev/null
  dev=$(free_nbd_device) || { warn "remote: no free /dev/nbdN (is the nbd module loaded?)"; return 1; }
  remote_client_args "$dev"
  if ! "${client_args[@]}" >/dev/null; then
    warn "remote: ${client_args[0]##*/} $(remote_name) $dev failed"
    return 1
  fi
  mkdir -p "$state_dir" && remote_set device "$dev" && remote_set name "$(remote_name)"
  if ! mkswap "$dev" >/dev/null; then
    warn "remote: mkswap $dev failed"
    remote_detach
    return 1
  fi
  if ! machine_swapon --discard=pages -p "$1" "$dev"; then
    warn "remote: swapon $dev failed"
    remote_detach
    return 1
  fi
  return 0
}

# remote_detach: swap off the recorded remote device (bounded by
# $timeout_s) and disconnect it; 0, or EXIT_REFUSED if it stays swap.
remote_detach ()
{
  local dev
  dev=$(remote_get device)
  if [[ -n $dev ]]; then
    if ! swap_off "$dev"; then
      warn "swapoff $dev failed: the remote device is still swap; free memory, then run '$program down' again"
      return $EXIT_REFUSED
    fi
    nbd-client -d "$dev" >/dev/null 2>&1 || { warn "nbd-client -d $dev failed"; return $EXIT_FAILED; }
  fi
  rm -f "$state_dir/remote" "$state_dir/remote.tmp"
  return 0
}

# remote_up: the recorded remote device is connected and swap.
remote_up ()
{
  local dev
  dev=$(remote_get device)
  [[ -n $dev ]] && is_swap "$dev"
}

# remote_priority: one below the local ladder's lowest step, if the local
# device is up, at least 0; else the configured priority.
remote_priority ()
{
  local below=$priority
  read_devices
  [[ ${#devices[@]} -gt 0 ]] && below=$((priority - ${#devices[@]}))
  echo $((below < 0 ? 0 : below))
}

# remote_bring_up: the remote device up (or already), at remote_priority;
# 0, or 1 with what failed said.
remote_bring_up ()
{
  local prio
  if remote_up; then
    say "remote already up: $(remote_get device), $(remote_get name)"
    return 0
  fi
  # A record left by a device that is no longer swap: cleared first.
  [[ -e $state_dir/remote ]] && { remote_detach || return 1; }
  prio=$(remote_priority)
  remote_attach "$prio" || return 1
  say "swap on $(remote_get device) (priority $prio), remote $(remote_get name)"
}

# The remote device's line for `status` (nothing without one).
remote_status_line ()
{
  local dev
  dev=$(remote_get device)
  [[ -n $dev ]] || return 0
  if remote_up; then
    echo "remote:     $dev, $(remote_get name)"
  else
    echo "remote:     $dev, $(remote_get name): not swap"
  fi
}
