#!/bin/bash
# cswap: the daemon that cswap.service starts runs its I/O threads
# SCHED_FIFO.  Without it both front ends hung under whole-machine memory
# pressure (doc/design.md, "Staying alive under memory pressure"), and a
# sandbox setting can take it away silently: RestrictRealtime=yes makes
# sched_setscheduler fail and the daemon only warns.
#
# The daemon is started with the built unit's ExecStart= and the
# [Service] settings it sets: by systemd itself (`systemd-run` with each
# of them) where a systemd manager runs, and otherwise by applying those
# that bear on scheduling as systemd would (RestrictRealtime= through the
# same seccomp filter, tests/service/restrict-realtime.c; NoNewPrivileges=,
# LimitMEMLOCK=, LimitRTPRIO= through setpriv and prlimit).  A setting this test does not know fails it, so that a new one
# is judged, not ignored.  Then it reads each thread's policy
# (/proc/PID/task/TID/stat, field 41).  A control run adds
# RestrictRealtime=yes and must find no real-time thread.
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/tap.sh"
[[ $(id -u) -eq 0 ]] || skip "the daemon mounts FUSE and locks memory: needs root"
[[ -c /dev/fuse ]] || skip "no /dev/fuse"
unit=$CSWAP_BUILD_ROOT/systemd/cswap.service
helper=$CSWAP_BUILD_ROOT/systemd/cswap
restrict_realtime=$CSWAP_BUILD_ROOT/tests/service/restrict-realtime

# Under /run, not /tmp: the unit's ProtectSystem=strict makes /tmp read-only.
dir=$(mktemp -d /run/cswap-unit-realtime.XXXXXX)
printf 'frontend = fuse\nsize = 64M\nmountpoint = %s/state/mnt\n' "$dir" >"$dir/cswap.conf"
transient=cswap-unit-realtime-$$
pid=''
stop_daemon ()
{
  if [[ $mode == systemd ]]; then
    systemctl stop "$transient" 2>/dev/null
    systemctl reset-failed "$transient" 2>/dev/null
  elif [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  fi
  mountpoint -q "$dir/state/mnt" && fusermount3 -uz "$dir/state/mnt"
  pid=''
}
trap 'stop_daemon; rm -rf "$dir"' EXIT

# A running systemd manager (sd_booted(): /run/systemd/system) starts the
# daemon itself; otherwise the settings are applied here.
if [[ -d /run/systemd/system ]]; then
  mode=systemd
else
  mode=emulated
  echo "# systemd is not running here (PID 1 is $(cat /proc/1/comm)):" \
    "the unit's settings are applied by this test"
fi

# service_settings UNIT: its [Service] lines, without comments.
service_settings ()
{
  awk '/^\[/ { in_service = ($0 == "[Service]"); next }
       in_service && /^[A-Za-z]/ { print }' "$1"
}

# exec_start UNIT: the words of ExecStart=, the installed helper replaced
# by the built one with this test's configuration.
exec_start ()
{
  local -a words
  read -r -a words <<<"$(sed -n 's/^ExecStart=//p' "$1")"
  [[ ${words[0]} == */cswap ]] || { echo "ExecStart= runs ${words[0]}, not cswap" >&2; return 1; }
  echo bash "$helper" -c "$dir/cswap.conf" "${words[@]:1}"
}

# start_with_systemd UNIT: systemd-run with each sandbox setting of UNIT.
start_with_systemd ()
{
  local -a props=() command paths
  local line
  while IFS= read -r line; do
    case ${line%%=*} in
      # The commands around ExecStart= (check, attach, tune) and the
      # directories /run/cswap and /var/lib/cswap of a real cswap.service,
      # which a test must not create or remove.
      ExecStart|ExecStartPre|ExecStartPost|ExecStop|ExecStopPost) ;;
      RuntimeDirectory|StateDirectory) ;;
      # Those directories may then be missing: "-" lets systemd go on.
      ReadWritePaths) read -r -a paths <<<"${line#*=}"
        props+=(-p "ReadWritePaths=${paths[*]/#/-}") ;;
      *) props+=(-p "$line") ;;
    esac
  done < <(service_settings "$1")
  # A build tree under /root or /home: ProtectHome= would hide the
  # programs; it does not bear on scheduling.
  [[ $CSWAP_BUILD_ROOT != /root/* && $CSWAP_BUILD_ROOT != /home/* ]] \
    || props+=(-p ProtectHome=no)
  read -r -a command <<<"$(exec_start "$1")" || return 1
  : >"$dir/log"
  systemd-run --unit="$transient" "${props[@]}" -p "ReadWritePaths=$dir" \
    -p "StandardOutput=append:$dir/log" -p "StandardError=append:$dir/log" \
    --setenv=CSWAP_STATE_DIR="$dir/state" --setenv=CSWAP_BACKING_DIR="$dir/lib" \
    --setenv=CSWAP_FUSE="$CSWAP_BUILD_ROOT/daemon/cswap-fuse" \
    "${command[@]}" >>"$dir/log" 2>&1 || return 1
  pid=$(systemctl show -p MainPID --value "$transient")
  [[ $pid -gt 0 ]]
}

# limit KEY VALUE: adds prlimit's option for LimitKEY=VALUE to wrap.  A
# limit that cannot be raised here (no CAP_SYS_RESOURCE in a container) is
# left as it is when root's capabilities override it anyway: CAP_IPC_LOCK
# the memory-lock limit, CAP_SYS_NICE the real-time priority limit.
limit ()
{
  local option=--${1#Limit} cap_name=CAP_SYS_NICE cap_bit=23 cap_eff
  option=${option,,}
  [[ $1 == LimitMEMLOCK ]] && cap_name=CAP_IPC_LOCK cap_bit=14
  cap_eff=$((16#$(awk '/^CapEff:/ { print $2 }' /proc/self/status)))
  if prlimit "$option=$2" true 2>/dev/null; then
    wrap+=(prlimit "$option=$2")
  elif (( cap_eff >> cap_bit & 1 )); then
    echo "# $1=$2: cannot be raised here; root's $cap_name overrides it"
  else
    echo "# $1=$2: cannot be applied here" >&2
    return 1
  fi
}

# start_emulated UNIT: the daemon under UNIT's settings, applied here.
start_emulated ()
{
  local -a wrap=() command caps=()
  local line key value cap filter=''
  while IFS= read -r line; do
    key=${line%%=*} value=${line#*=}
    case $key in
      RestrictRealtime) [[ $value == yes ]] && wrap+=("$restrict_realtime") ;;
      # SCHED_FIFO needs CAP_SYS_NICE: the lines add up, as systemd's do.
      CapabilityBoundingSet) for cap in $value; do caps+=("+${cap#CAP_}"); done ;;
      # An allow list without sched_setscheduler (@resources, in
      # @system-service) would take SCHED_FIFO away; a deny list, judge it.
      SystemCallFilter)
        [[ $value != "~"* ]] || { echo "# $line: a deny list; teach this test" >&2; return 1; }
        [[ " $value " == *" @system-service "* || " $value " == *" @resources "* ]] && filter=allows
        [[ -n $filter ]] || filter=denies ;;
      SystemCallErrorNumber|SystemCallArchitectures) ;;
      NoNewPrivileges) [[ $value == yes ]] && wrap+=(setpriv --no-new-privs) ;;
      LimitMEMLOCK|LimitRTPRIO) limit "$key" "${value/infinity/unlimited}" || return 1 ;;
      # No bearing on the scheduling policy of the daemon's threads: the
      # service's type and commands, its life cycle, its mount namespace,
      # its devices and its directories.
      Type|NotifyAccess|Exec*|Timeout*|Restart|RuntimeDirectory|StateDirectory) ;;
      ReadWritePaths|ProtectSystem|ProtectHome|PrivateTmp) ;;
      ProtectKernelTunables|ProtectControlGroups|LockPersonality) ;;
      DevicePolicy|DeviceAllow|OOMScoreAdjust) ;;
      # Nor the kernel's modules, logs, clock and host name, the socket
      # families, the namespaces, set-uid files or W^X mappings.
      ProtectKernelModules|ProtectKernelLogs|ProtectClock|ProtectHostname) ;;
      RestrictAddressFamilies|IPAddressDeny|RestrictNamespaces) ;;
      RestrictSUIDSGID|MemoryDenyWriteExecute) ;;
      *) echo "# $line: this test does not know whether it bears on SCHED_FIFO; teach it" >&2
         return 1 ;;
    esac
  done < <(service_settings "$1")
  [[ $filter != denies ]] \
    || { echo "# SystemCallFilter= leaves out sched_setscheduler (@resources)" >&2; return 1; }
  if [[ ${#caps[@]} -gt 0 ]]; then
    local IFS=,
    wrap=(setpriv "--bounding-set=-all,${caps[*],,}" "${wrap[@]}")
    unset IFS
  fi
  read -r -a command <<<"$(exec_start "$1")" || return 1
  CSWAP_STATE_DIR=$dir/state CSWAP_BACKING_DIR=$dir/lib CSWAP_FUSE=$CSWAP_BUILD_ROOT/daemon/cswap-fuse \
    "${wrap[@]}" "${command[@]}" >"$dir/log" 2>&1 &
  pid=$!
}

# fifo_threads: "NAME:POLICY" for each thread of the daemon, then the
# number running SCHED_FIFO (policy 1) on a line of its own.
fifo_threads ()
{
  local stat fields fifo=0 task
  for task in /proc/"$pid"/task/*; do
    stat=$(cat "$task/stat" 2>/dev/null) || continue
    read -r -a fields <<<"${stat##*) }"    # field 3 onwards
    echo "# $(cat "$task/comm"):${fields[38]}"
    [[ ${fields[38]} == 1 ]] && fifo=$((fifo + 1))
  done
  echo "$fifo"
}

# run_daemon UNIT: starts it, waits for its device, prints fifo_threads.
run_daemon ()
{
  "start_$mode" "$1" || { sed 's/^/# /' "$dir/log"; echo 0; return 1; }
  # `cswap run` execs the daemon: the PID stays, the program changes.
  # Its mount is in its own namespace under systemd: seen from its root.
  local device=/proc/$pid/root$dir/state/mnt/swap
  for _ in $(seq 100); do
    [[ -e $device ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -e $device ]] || { sed 's/^/# /' "$dir/log"; echo 0; stop_daemon; return 1; }
  fifo_threads
  stop_daemon
}

out=$(run_daemon "$unit")
sed '$d' <<<"$out"
fifo=$(tail -n 1 <<<"$out")
check "under cswap.service's settings, $fifo of the daemon's threads run SCHED_FIFO" \
  test "$fifo" -ge 1
check "and it does not warn that SCHED_FIFO was refused" \
  eval '! grep -q "warning: SCHED_FIFO" "$dir/log"'

# The control: the same unit with RestrictRealtime=yes added.
sed '/^\[Service\]$/a RestrictRealtime=yes' "$unit" >"$dir/restricted.service"
out=$(run_daemon "$dir/restricted.service")
fifo=$(tail -n 1 <<<"$out")
check "control: with RestrictRealtime=yes no thread runs SCHED_FIFO ($fifo)" \
  test "$fifo" -eq 0
check "and the daemon warns" grep -q "warning: SCHED_FIFO" "$dir/log"

echo "1..$n"
exit $status
