# shellcheck shell=bash
# cswap helper: the device ladder (doc/design.md, "The device ladder"): the
# windows over the FUSE file, a direct-I/O loop device over each, and
# their swap priorities.
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

# swap_on_ladder I: swapon the recorded device I at its place in the
# ladder: the recorded priority for the first, one less for each next one.
# (Recorded, since `down` does not read the configuration, which may have
# changed since.)
swap_on_ladder ()
{
  local prio=$(($(state_get priority) - $1))
  ((prio >= -1)) || prio=-1
  swapon --discard=pages -p "$prio" "${devices[$1]}"
}
