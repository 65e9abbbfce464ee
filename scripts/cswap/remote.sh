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

remote_wanted () { [[ -n $remote ]]; }

# remote_name: the server and export, in words.
remote_name ()
{
  echo "$remote:$remote_port${remote_export:+ export \"$remote_export\"}"
}

# remote_client_args DEV: nbd-client's command line for DEV, in the array
# client_args.  The block size is the page's; netlink (nbd-client's
# default) hands the socket to the kernel and leaves no process behind,
# so nothing in userspace is on the swap path.  With TLS that is not so:
# nbd-client keeps a proxy process between the kernel and the server,
# and -swap locks it in memory.
remote_client_args ()
{
  client_args=("$remote" "$remote_port" "$1" -block-size 4096)
  [[ -n $remote_export ]] && client_args+=(-name "$remote_export")
  ((remote_connections > 1)) && client_args+=(-connections "$remote_connections")
  ((remote_timeout > 0)) && client_args+=(-timeout "$remote_timeout")
  if remote_tls; then
    [[ -n $remote_certfile ]] \
      && client_args+=(-certfile "$remote_certfile" -keyfile "$remote_keyfile")
    [[ -n $remote_cacertfile ]] && client_args+=(-cacertfile "$remote_cacertfile")
    [[ -n $remote_tlshostname ]] && client_args+=(-tlshostname "$remote_tlshostname")
    client_args+=(-enable-tls -swap)
  fi
}

remote_tls () { [[ -n $remote_certfile || -n $remote_cacertfile ]]; }

# remote_attach PRIORITY: connects a free nbd device to the server, makes
# it swap and turns it on at PRIORITY.  Records remote_device.  Returns 0,
# or 1 after undoing its part.
remote_attach ()
{
  local dev client_args=()
  command -v nbd-client >/dev/null || { warn "remote: nbd-client is not installed"; return 1; }
  modprobe nbd 2>/dev/null
  dev=$(free_nbd_device) || { warn "remote: no free /dev/nbdN (is the nbd module loaded?)"; return 1; }
  remote_client_args "$dev"
  remote_tls && warn "remote: nbd-client's TLS runs a userspace proxy in the swap path," \
    "which can deadlock under memory pressure (doc/design.md, \"Many exports, one store\": TLS)"
  if ! nbd-client "${client_args[@]}" >/dev/null; then
    warn "remote: nbd-client $(remote_name) $dev failed"
    return 1
  fi
  state_set remote_device "$dev"
  state_set remote "$(remote_name)"
  if ! mkswap "$dev" >/dev/null; then
    warn "remote: mkswap $dev failed"
    remote_detach
    return 1
  fi
  if ! swapon --discard=pages -p "$1" "$dev"; then
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
  dev=$(state_get remote_device)
  [[ -n $dev ]] || return 0
  if ! swap_off "$dev"; then
    warn "swapoff $dev failed: the remote device is still swap; free memory, then run '$program down' again"
    return $EXIT_REFUSED
  fi
  nbd-client -d "$dev" >/dev/null 2>&1 || { warn "nbd-client -d $dev failed"; return $EXIT_FAILED; }
  state_unset remote_device
  state_unset remote
  return 0
}

# remote_up: the recorded remote device is connected and swap.
remote_up ()
{
  local dev
  dev=$(state_get remote_device)
  [[ -n $dev ]] && is_swap "$dev"
}
