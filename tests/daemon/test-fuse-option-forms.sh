#!/bin/bash
# cswap: cswap-fuse takes every device option its --help shows in each
# form the help shows (--key=value, --key value and -o key=value), and
# nbdkit cswap as key=value; a bad value is refused in each form under
# the option's own name, with nothing mounted.  The values are those of
# tests/lib/option-values.sh, shared with the configuration file's test.
#
# Then the options whose name begins another option's name (backing /
# backing-size, ctl / ctl-uid, compact / compact-threshold), together.  libfuse calls the parser once for every
# template an argument starts with, and --backing-size=64M used to be
# taken as backing=-size=64M too: a file the user never named appeared in
# the working directory, and the backing file named was ignored.
# Each run mounts, is checked, and is unmounted; no option may create a
# file the user did not name.  A size expression (size=min(ram / 2, 4096))
# works in each form too, and so does the default size.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip "mounting the device file needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 is not installed"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse

work=$(mktemp -d /var/tmp/cswap-option-forms.XXXXXX)
mnt=$work/mnt
cwd=$work/cwd
mkdir "$mnt" "$cwd"
cleanup () {
  grep -qs " $mnt fuse" /proc/mounts && fusermount3 -u -z "$mnt"
  rm -rf "$work"
}
trap cleanup EXIT

# run_form NAME ARG…: mounts with ARG… from an empty working directory,
# then unmounts; sets $stray to what appeared in that directory.
run_form () {
  rm -rf "${cwd:?}"/* "${cwd:?}"/.[!.]* "$work/backing" 2>/dev/null
  (cd "$cwd" && timeout 20 "$cswap_fuse" "$mnt" --size 64M "$@") >"$work/log" 2>&1
  mounted=$?
  [ $mounted -eq 0 ] && fusermount3 -u "$mnt"
  stray=$(ls -A "$cwd")
  [ $mounted -eq 0 ] || sed 's/^/# /' "$work/log"
}

not_mounted () {
  ! grep -qs " $mnt fuse" /proc/mounts
}

lib=$(cd "$(dirname "$0")/../lib" && pwd)
option_dir=$work
source "$lib/option-values.sh"
plugin=$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so
# What an option needs beside it to be valid at all.
declare -A companion=([backing]=backing-size=64M)

# run_nbdkit KEY=VALUE…: nbdkit cswap with them from an empty working
# directory, stopping at once; sets $stray and the exit status.
run_nbdkit () {
  rm -rf "${cwd:?}"/* "${cwd:?}"/.[!.]* "$work/backing" 2>/dev/null
  # In a sanitizer build, nbdkit needs the plugin's runtimes preloaded.
  (cd "$cwd" && source "$lib/sanitizer-env.sh" \
     && timeout 30 nbdkit -U - --run true "$plugin" size=64M ctl=none "$@") \
    >"$work/log" 2>&1
  local status=$?
  stray=$(ls -A "$cwd")
  return $status
}

# form_args FORM KEY VALUE: the arguments for KEY=VALUE in FORM.
form_args () {
  case $1 in
    equals) args=("--$2=$3") ;;
    space) args=("--$2" "$3") ;;
    o) args=(-o "$2=$3") ;;
  esac
}

mounted_clean () { [ "$mounted" -eq 0 ] && [ -z "$stray" ]; }
refused_clean () {
  [ "$mounted" -ne 0 ] && grep -q -- "$1" "$work/log" && [ -z "$stray" ] && not_mounted
}

have_nbdkit=
command -v nbdkit >/dev/null && [ -e "$plugin" ] && have_nbdkit=yes
options=$("$cswap_fuse" --help | sed -n 's/^    --\([a-z-]*\)=.*/\1/p' | grep -vx 'threads\|config')
check "--help shows the device options" test -n "$options"
for key in $options; do
  if [ -z "${good[$key]+set}" ]; then
    check "$key has a value in tests/lib/option-values.sh" false
    continue
  fi
  extra=()
  [ -z "${companion[$key]:-}" ] || extra=(-o "${companion[$key]}")
  want=${bad[$key]#*|}
  for form in equals space o; do
    form_args $form "$key" "${good[$key]}"
    run_form "${extra[@]}" "${args[@]}"
    check "$key, $form form (${args[*]}): mounts, nothing stray${stray:+ ($stray)}" mounted_clean
    form_args $form "$key" "${bad[$key]%%|*}"
    run_form "${extra[@]}" "${args[@]}"
    check "$key, $form form, bad (${args[*]}): refused as $key${want:+ ($want)}" \
      refused_clean "$key=.*$want"
  done
  [ -n "$have_nbdkit" ] || continue
  # (mounted_clean and refused_clean read the status from $mounted.)
  run_nbdkit ${companion[$key]:+"${companion[$key]}"} "$key=${good[$key]}"
  mounted=$?
  [ $mounted -eq 0 ] || sed 's/^/# /' "$work/log"
  check "nbdkit cswap $key=${good[$key]}: accepted, nothing stray${stray:+ ($stray)}" mounted_clean
  run_nbdkit ${companion[$key]:+"${companion[$key]}"} "$key=${bad[$key]%%|*}"
  mounted=$?
  check "nbdkit cswap $key=${bad[$key]%%|*}: refused as $key" refused_clean "$key=.*$want"
done
[ -n "$have_nbdkit" ] || echo "# nbdkit or the plugin is missing: the key=value forms are left out"

backing_is_64m () {
  [ "$(stat -c %s "$work/backing" 2>/dev/null)" = $((64 << 20)) ] && [ -z "$stray" ]
}

for form in equals space o; do
  case $form in
    equals) args=(--backing="$work/backing" --backing-size=64M --ctl="$work/ctl.sock"
                  --ctl-uid=65534 --compact=off --compact-threshold=30) ;;
    space)  args=(--backing "$work/backing" --backing-size 64M --ctl "$work/ctl.sock"
                  --ctl-uid 65534 --compact off --compact-threshold 30) ;;
    o)      args=(-o backing="$work/backing" -o backing-size=64M -o ctl="$work/ctl.sock"
                  -o ctl-uid=65534 -o compact=off -o compact-threshold=30) ;;
  esac
  run_form "${args[@]}"
  check "$form form: mounts, the backing file named is 64 MiB, nothing else created${stray:+ (stray: $stray)}" \
    backing_is_64m
  # The shorter name given last must not eat the longer one's value either.
  case $form in
    equals) args=(--backing-size=64M --backing="$work/backing" --ctl=none) ;;
    space)  args=(--backing-size 64M --backing "$work/backing" --ctl none) ;;
    o)      args=(-o backing-size=64M -o backing="$work/backing" -o ctl=none) ;;
  esac
  run_form "${args[@]}"
  check "$form form, longer name first: the same" backing_is_64m
done

# size_with RAM-MIB ARG…: the size of the device file cswap-fuse serves
# with ARG… on a machine of RAM-MIB MiB (CSWAP_TEST_RAM_MIB).
size_with () {
  local ram_mib=$1 size=
  shift
  if CSWAP_TEST_RAM_MIB=$ram_mib timeout 20 "$cswap_fuse" "$mnt" --ctl=none "$@" \
       >"$work/log" 2>&1; then
    size=$(stat -c %s "$mnt/swap")
    fusermount3 -u "$mnt"
  else
    sed 's/^/# /' "$work/log" >&2
  fi
  echo "$size"
}

# A size expression in each form; -o splits at commas unless escaped.
for form in equals space o; do
  case $form in
    equals) args=(--size='min(ram / 2, 4096)') ;;
    space)  args=(--size 'min(ram / 2, 4096)') ;;
    o)      args=(-o 'size=min(ram / 2\, 4096)') ;;
  esac
  size=$(size_with 256 "${args[@]}")
  check "$form form: ${args[*]} with 256 MiB of RAM is 128 MiB ($size)" \
    test "$size" = $((128 << 20))
done
size=$(size_with 256 --size=50%)
check "--size=50% with 256 MiB of RAM is 128 MiB ($size)" test "$size" = $((128 << 20))
size=$(size_with 256)
check "no size with 256 MiB of RAM: min(ram / 2, 4096) is 128 MiB ($size)" \
  test "$size" = $((128 << 20))
size=$(size_with 16384)
check "no size with 16 GiB of RAM: min(ram / 2, 4096) is 4 GiB ($size)" \
  test "$size" = $((4 << 30))
message=$(timeout 10 "$cswap_fuse" "$mnt" --ctl=none -o 'size=min(ram / 2, 4096)' 2>&1)
echo "# $message"
check "-o size= with an unescaped comma is refused where the value was cut" \
  grep -q "size=min(ram / 2: expected ',' or ')' at column 12, found the end" <<<"$message"

# A bad value for the longer option is reported under its own name.
message=$(cd "$cwd" && timeout 10 "$cswap_fuse" "$mnt" --size 64M --ctl=none \
            --compact-threshold=0 2>&1)
echo "# $message"
check "--compact-threshold=0 is refused as compact-threshold" \
  grep -q '^cswap-fuse: compact-threshold=0:' <<<"$message"
check "and nothing is mounted" not_mounted
done_testing
