# shellcheck shell=bash
# cswap helper: the daemon: its command line, waiting for it to serve, stopping it.
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).

# The daemon's command line for the configured front end.  The control
# socket goes before the file, so that a ctl= in the file wins; the
# default backing file after it (backing.sh: only where the file names
# none).
daemon_command ()
{
  backing_choose
  case $frontend in
    fuse)
      daemon_argv=("$cswap_fuse" -f "--ctl=$socket" --config "$config" "${backing_args[@]}" "$mountpoint")
      ;;
    ublk)
      [[ -x $cswap_ublk ]] || die $EXIT_FAILED "frontend = ublk: $cswap_ublk is not installed"
      [[ -e $dev_dir/ublk-control ]] || modprobe ublk_drv 2>/dev/null \
        || die $EXIT_FAILED "frontend = ublk: this kernel has no ublk driver (modprobe ublk_drv failed)"
      # One ublk device per step of the ladder, made by the daemon, which
      # lists them in a file once all serve.
      local size windows= offset length
      size=$("$cswap_ublk" "--ctl=$socket" --config "$config" --print-size) \
        || die $EXIT_FAILED "frontend = ublk: cannot size the device"
      while read -r offset length; do
        windows+=${windows:+,}$offset:$length
      done < <(ladder_windows "$size" "$(size_bytes "$ladder_step")")
      rm -f "$state_dir/ublk-devices"
      daemon_argv=("$cswap_ublk" "--ctl=$socket" --config "$config"
                   --windows "$windows" --device-list "$state_dir/ublk-devices"
                   "${backing_args[@]}")
      ;;
    nbd)
      command -v nbdkit >/dev/null || die $EXIT_FAILED "frontend = nbd: nbdkit is not installed"
      check_nbdkit_fits "$(command -v nbdkit)"
      # The plugin warns about vm.min_free_kbytes and vm.page-cluster
      # left low (nbdkit-cswap-plugin(1)); here they are `tune`'s, set
      # once the device is up (or kept, as the configuration says).
      export CSWAP_SYSCTLS_BY_CSWAP=1
      # --tls=off: the kernel's client on a root-only socket speaks no
      # TLS, and the plugin then leaves GnuTLS unlocked (4 MiB).
      daemon_argv=(nbdkit --foreground --tls=off --threads "$(nbdkit_threads)"
                   --unix "$state_dir/nbd.sock"
                   "$nbdkit_plugin" "ctl=$socket" "config=$config" "${backing_args[@]}")
      ;;
    *)
      die $EXIT_USAGE "frontend = $frontend: unknown"
      ;;
  esac
}

# nbdkit_threads: nbdkit's threads for the one connection, one per CPU
# (2 to 16; nbdkit's default is 16).  A thread beyond the CPUs serves
# nothing sooner but holds a locked stack and a request buffer: in a
# 2-CPU, 256 MiB VM, --threads 2 peaked 5-6 MiB below 16 at the same
# speed (doc/design.md, "The smallest machine").
nbdkit_threads ()
{
  local cpus
  cpus=$(nproc 2>/dev/null) || cpus=16
  ((cpus < 2)) && cpus=2
  ((cpus > 16)) && cpus=16
  echo "$cpus"
}

# elf_writable_bytes FILE: the memory size of an ELF64 file's writable
# loaded segments (its data and bss), or nothing.  Numbers are read in
# the byte order of the machine (od's), which is the file's for a binary
# it runs.  Each program header is 7 eight-byte words: type and flags,
# offset, addresses, sizes in the file and in memory, alignment.
elf_writable_bytes ()
{
  local file=$1 phoff phentsize phnum words i total=0
  [[ $(od -An -c -N 5 "$file" 2>/dev/null | tr -d ' ') == '177ELF002' ]] || return 0
  phoff=$(od -An -t u8 -j 32 -N 8 "$file" | tr -d ' ')
  read -r phentsize phnum < <(od -An -t u2 -j 54 -N 4 "$file")
  [[ $phentsize == 56 ]] || return 0
  read -r -d '' -a words < <(od -An -v -t u8 -j "$phoff" -N $((phnum * 56)) "$file")
  for ((i = 0; i + 6 < ${#words[@]}; i += 7)); do
    # PT_LOAD (1) with PF_W (2): the type is the low half of the first word.
    (((words[i] & 0xffffffff) == 1 && (words[i] >> 32 & 2))) \
      && total=$((total + words[i + 5]))
  done
  echo "$total"
}

# check_nbdkit_fits NBDKIT: dies with the reason where the kernel would
# kill nbdkit as it starts.  Debian 12's nbdkit has 192 MiB of static
# buffers (bss), charged at exec, and under vm.overcommit_memory = 0 the
# kernel refuses one charge larger than RAM plus swap: exec then ends in
# SIGSEGV before nbdkit runs a line, on a machine under about 200 MiB
# (seen in tests/vm at 192 MiB: "__vm_enough_memory: no enough memory").
# The buffers are address space, mostly never touched.
check_nbdkit_fits ()
{
  local need have overcommit
  overcommit=$(cat "$procsys/vm/overcommit_memory" 2>/dev/null)
  [[ $overcommit == 0 ]] || return 0
  need=$(elf_writable_bytes "$1")
  have=$(awk '/^(MemTotal|SwapTotal):/ {kib += $2} END {print kib * 1024}' "$meminfo")
  [[ -n $need && -n $have ]] && ((need > have)) || return 0
  die $EXIT_FAILED "frontend = nbd: $1 reserves $((need >> 20)) MiB at start," \
    "more than this machine's RAM and swap ($((have >> 20)) MiB), and" \
    "vm.overcommit_memory = 0 makes the kernel kill it as it starts;" \
    "set vm.overcommit_memory = 1 or use frontend = fuse"
}

# wait_for SECONDS COND…: polls COND every 0.1 s.
wait_for ()
{
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [[ $SECONDS -lt $deadline ]] || return 1
    sleep 0.1
  done
}

# The device file or socket the daemon serves, seen from its own mount
# namespace (systemd may have given it a private one).
served_path ()
{
  case $frontend in
    fuse) echo "/proc/$1/root$mountpoint/swap" ;;
    nbd) echo "$state_dir/nbd.sock" ;;
    ublk) echo "$state_dir/ublk-devices" ;;
  esac
}

# wait_serving PID SECONDS: 0 once the daemon serves, 1 if it does not
# within SECONDS, 2 as soon as it is gone.
wait_serving ()
{
  local pid=$1 deadline=$((SECONDS + $2))
  until [[ -e $(served_path "$pid") ]]; do
    pid_alive "$pid" || return 2
    [[ $SECONDS -lt $deadline ]] || return 1
    sleep 0.1
  done
}

# stop_daemon PID: SIGTERM and wait (SIGKILL after 30 s).  Only ever called
# once the device is no longer swap (cmd_down asks still_swap first: a
# cswap-fuse refuses SIGTERM while its file is swap).
stop_daemon ()
{
  local pid=$1
  pid_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  if ! wait_for 30 eval "! kill -0 $pid 2>/dev/null"; then
    warn "daemon $pid ignored SIGTERM for 30 s: killing it"
    kill -KILL "$pid" 2>/dev/null
    wait_for 5 eval "! kill -0 $pid 2>/dev/null"
  fi
}

# still_swap: 0 if the recorded FUSE file is swap through any loop device,
# recorded or not (someone's own losetup), saying which.  The rule is the
# daemon's own (cswap-fuse --swap-users, swap-users.h), by which it refuses
# SIGTERM and SIGINT: asked first, so that `down` refuses as well instead
# of waiting for a daemon that will not stop.
still_swap ()
{
  local users
  [[ $(state_get frontend) == fuse && -x $cswap_fuse ]] || return 1
  users=$("$cswap_fuse" --swap-users "$(state_get mountpoint)" 2>/dev/null) || return 1
  warn "refusing to stop: ${users//$'\n'/ } is swap over $(state_get mountpoint)/swap;"
  warn "swapoff it (and losetup -d it), then run '$program down' again."
}

# FUSE over io_uring, which cswap-fuse's default transport (auto) uses
# when it is on: turned on where root can.  A kernel without it, or a
# read-only /sys (systemd's ProtectKernelTunables=; the unit turns it on
# in an ExecStartPre= of its own), is no error: auto then uses libfuse's
# loop.
enable_fuse_uring ()
{
  local param=/sys/module/fuse/parameters/enable_uring
  [[ -e $param ]] || modprobe -q fuse 2>/dev/null
  [[ -w $param ]] && { echo Y >"$param"; } 2>/dev/null
  return 0
}
