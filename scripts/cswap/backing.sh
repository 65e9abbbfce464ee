# shellcheck shell=bash
# cswap helper: the backing file the daemon gets when the configuration
# names none (cswap(8), BACKING FILE).
#
# A part of the `cswap` script: scripts/cswap.in includes it (#@include)
# when meson builds the script, so it runs with the script's variables
# and helpers (say, warn, die, the EXIT_* codes, $config, $state_dir...).
#
# Without a backing file a pool that fills RAM takes the machine with it;
# with one, cold pages go to disk (issue 63: a 256 MiB VM OOM-killed with
# an empty backing file beside the pool).  So unless cswap.conf says
# `backing = PATH` or `backing = none`, the daemon gets
# $backing_dir/backing, where that file system can hold it as the tier
# needs: on a disk (not tmpfs or ramfs: a file in RAM saves no RAM), with
# direct I/O (the tier opens it O_DIRECT) and fallocate (the tier
# preallocates the file, and a thin one its segments).  io_uring asks
# nothing more of the file system: it falls back to its own workers where
# a file system has no async path.  Its size: the device's, but at most
# half the space free there, so that swap never fills the file system
# (the file is sealed, as any backing file: backing-encrypt).

# backing_min_bytes: smaller than this and no file is made (the tier's
# segments are 1 MiB; a few dozen of them would hold little).
readonly backing_min_bytes=$((64 << 20))

# device_bytes: the device size in the merged listing's size line
# ("size = 50%  # default, 2048 MiB"), in bytes, or nothing.
device_bytes ()
{
  local line amount
  while IFS= read -r line; do
    [[ $line == "size = "* ]] || continue
    amount=${line##*, }
    case $amount in
      *" MiB") echo $((${amount% MiB} << 20)) ;;
      *" KiB") echo $((${amount% KiB} << 10)) ;;
      *" bytes") echo "${amount% bytes}" ;;
    esac
    return
  done <<<"$merged_config"
}

# backing_fs_problem DIR: why DIR cannot hold the tier's file, or nothing.
backing_fs_problem ()
{
  local dir=$1 type probe=$1/.cswap-probe.$$
  type=$(stat -f -c %T "$dir" 2>/dev/null) || { echo "cannot stat $dir"; return; }
  case $type in
    tmpfs|ramfs) echo "$dir is on $type, in RAM: a backing file there saves no memory"; return ;;
  esac
  [[ -w $dir ]] || { echo "$dir is not writable"; return; }
  if ! dd if=/dev/zero of="$probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null; then
    rm -f "$probe"
    echo "$dir ($type) refuses direct I/O (O_DIRECT), which the tier uses"
    return
  fi
  if ! fallocate -l 1M "$probe" 2>/dev/null; then
    rm -f "$probe"
    echo "$dir ($type) cannot preallocate (fallocate), which the tier needs"
    return
  fi
  rm -f "$probe"
}

# backing_choose: the backing file for this configuration: $backing_path
# (empty: none), $backing_why (in words, for status and check) and
# $backing_args, the daemon's options naming the default file (empty
# where the configuration names one or none, which the daemon reads
# itself); and with it what ladder-online = auto is (backing_settle_ladder).
backing_choose ()
{
  backing_choose_file
  backing_settle_ladder
}

backing_choose_file ()
{
  local dir=$backing_dir file=$backing_dir/backing problem free size device kept=0
  backing_args=() backing_path='' backing_why=''
  case $backing in
    none) backing_why="none: backing = none in $config"; return 0 ;;
    ?*) backing_path=$backing backing_why="backing = $backing in $config"; return 0 ;;
  esac
  # shellcheck disable=SC2174  # 0700 is for the deepest, our own directory
  if [[ ! -d $dir ]] && ! mkdir -p -m 0700 "$dir" 2>/dev/null; then
    backing_why="none: cannot make $dir"
    return 0
  fi
  problem=$(backing_fs_problem "$dir")
  [[ -z $problem ]] || { backing_why="none: $problem"; return 0; }
  device=$(device_bytes)
  [[ -n $device ]] || { backing_why="none: the device size is not known"; return 0; }
  # The space free there, the last run's file included: it is used again.
  free=$(stat -f -c '%a * %S' "$dir") && free=$((free))
  [[ -f $file ]] && kept=$(stat -c '%b * %B' "$file") && free=$((free + kept))
  if [[ -n $backing_size ]]; then
    size=$backing_size
    backing_why="default, $file, backing-size = $backing_size in $config"
  else
    size=$((device < free / 2 ? device : free / 2))
    size=$((size >> 20 << 20))
    if ((size < backing_min_bytes)); then
      backing_why="none: $((free >> 20)) MiB free in $dir, and a backing file takes at most half of it (at least $((backing_min_bytes >> 20)) MiB)"
      return 0
    fi
    backing_why="default, $file: $((size >> 20)) MiB, the device's size or half the free space there ($((free >> 20)) MiB), whichever is less"
  fi
  backing_path=$file
  case $frontend in
    nbd) backing_args=("backing=$file" "backing-size=$size") ;;
    *) backing_args=(-o "backing=$file" -o "backing-size=$size") ;;
  esac
}

# backing_settle_ladder: with a backing file, ladder-online = auto is
# all.  Following keeps the swap online about full, and the kernel then
# frees a page's slot when it reads the page back: each page read and
# evicted again is written again, and the store keeps the stale copy
# (it is not told) until the slot is used again.  That trade saves RAM
# where the store is RAM alone; with a backing file the copies the kernel
# keeps go to the file, and a page evicted again costs nothing.  In a
# 256 MiB VM (6.12, random-check of 1.5x MemTotal, issue 63): follow
# 515 s, 188 k pages swapped out, 98 k disk reads; all 381 s, 84 k, 58 k.
backing_settle_ladder ()
{
  if ((ladder_online_auto)) && [[ -n $backing_path ]]; then
    ladder_online=all
  fi
  return 0
}
