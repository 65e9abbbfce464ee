#!/bin/bash
# cswap: cswap-fuse takes every device option whose name begins another
# option's name (backing / backing-size, ctl / ctl-uid, compact /
# compact-threshold) in each form its --help shows: --key=value,
# --key value and -o key=value.  libfuse calls the parser once for every
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
