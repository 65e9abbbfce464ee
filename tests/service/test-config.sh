#!/bin/bash
# shellcheck disable=SC2016,SC1003  # eval and --run strings expand later, on purpose
# cswap: the configuration file (daemon/config-file.c) through
# `cswap-fuse --check-config`: every key cswap.conf(5) documents is
# accepted, every device option the daemons take is documented, bad keys
# and values are rejected with the file and line, and config= in nbdkit
# reads the file in place (later keys override it).
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/sanitizer-env.sh"
: "${CSWAP_SOURCE_ROOT:?run through meson test}"
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
plugin=$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so
manpage=$CSWAP_SOURCE_ROOT/man/cswap.conf.5

n=0 failed=0
check () {                      # check NAME COMMAND…
  local name=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $name"
  else failed=$((failed + 1)); echo "not ok $n - $name"; fi
}
dir=$(mktemp -d /tmp/cswap-config.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# A valid value for every key; a key documented without one here fails.
declare -A good=(
  [size]=1G [codec]=lz4 [level]=3 [pool-limit]=25% [huge-threshold]=3000
  [max-zspage-pages]=4 [backing]=$dir/backing [backing-size]=64M
  [backing-prealloc]=no [backing-encrypt]=no [accept-threshold]=80 [writeback-batch]=32
  [idle-writeback]=60 [ctl]=none [ctl-uid]=1000 [reserve]=4M
  [lock-memory]=no [compact]=off [compact-threshold]=25 [transport]=classic
  [frontend]=nbd [priority]=5 [mountpoint]=/run/cswap/other
)
# And a bad one, with a word of the expected message.
declare -A bad=(
  [size]="3|multiple of 4096" [codec]="lzo|unknown codec" [level]="x|"
  [pool-limit]="200%|" [huge-threshold]="0|" [max-zspage-pages]="17|"
  [backing]="|" [backing-size]="lots|" [backing-prealloc]="maybe|yes or no"
  [backing-encrypt]="perhaps|yes or no"
  [accept-threshold]="0|" [writeback-batch]="257|" [idle-writeback]="-1|"
  [ctl]="|" [ctl-uid]="root|" [reserve]="8X|suffix"
  [lock-memory]="maybe|yes or no" [compact]="sometimes|auto or off"
  [compact-threshold]="0|" [transport]="ring|auto, uring or classic"
  [frontend]="tcp|fuse or nbd"
  [priority]="40000|" [mountpoint]="relative/path|absolute"
)

# check_file NAME EXPECTED-OUTPUT-REGEX EXPECTED-STATUS <<<CONTENTS
check_file () {
  local name=$1 want=$2 want_status=$3 out status
  cat >"$dir/test.conf"
  out=$("$cswap_fuse" --check-config "$dir/test.conf" 2>&1)
  status=$?
  if [[ $status -eq $want_status && $out =~ $want ]]; then
    check "$name" true
  else
    check "$name (got status $status: $out)" false
  fi
}

documented=$(sed -n 's/^\.B[IR] \([a-z\\-]*\) " = ".*/\1/p' "$manpage" | tr -d '\\' | sort -u)
check "cswap.conf(5) documents keys" test -n "$documented"
# Every device option the daemons take (options_help, as --help prints
# it) is in the manual.
taken=$("$cswap_fuse" --help | sed -n 's/^    --\([a-z-]*\)=.*/\1/p' | grep -vx 'threads\|config' | sort -u)
for key in $taken; do
  check "device option $key is documented in cswap.conf(5)" \
    grep -qx -- "$key" <<<"$documented"
done

all=
for key in $documented; do
  if [[ -z ${good[$key]+set} ]]; then
    check "documented key $key has a test value" false
    continue
  fi
  [[ $key == size ]] && extra= || extra="size = 1G"
  check_file "documented key $key = ${good[$key]} is accepted" '^ok$' 0 \
    <<<"$extra"$'\n'"$key = ${good[$key]}"
  [[ $key == level || $key == codec ]] || all+="$key = ${good[$key]}"$'\n'
done
check_file "every key at once, with comments and blank lines" '^ok$' 0 <<EOF2
# a comment

$all
   # an indented comment
level = 3   # a trailing comment
EOF2

for key in $documented; do
  [[ -n ${bad[$key]+set} ]] || continue
  value=${bad[$key]%%|*} word=${bad[$key]#*|}
  [[ $key == size ]] && first="codec = zstd" || first="size = 1G"
  check_file "$key = '$value' is rejected on line 3" \
    "^cswap-fuse: $dir/test.conf:3: $key=.*$word" 1 \
    <<<"$first"$'\n\n'"$key = $value"
done

check_file "an unknown key is rejected with its line" \
  "test.conf:2: no-such-key=1: unknown" 1 <<<$'size = 1G\nno-such-key = 1'
check_file "a line without '=' is rejected with its line" \
  "test.conf:3: size 1G: expected key = value" 1 <<<$'# c\n\nsize 1G'
check_file "a key given twice is rejected, naming both lines" \
  "test.conf:4: size: given twice \\(first on line 1\\)" 1 \
  <<<$'size = 1G\ncodec = lz4\n\nsize = 2G'
check_file "a line with no key is rejected" "test.conf:1: no key before '='" 1 \
  <<<$' = 1G'
check_file "a missing size is reported for the file" \
  "test.conf: size=SIZE is required" 1 <<<'codec = lz4'
check_file "a level the codec does not take is reported" \
  "test.conf: level=3: lz4 takes no level" 1 <<<$'size = 1G\ncodec = lz4\nlevel = 3'
check_file "an empty file lacks the size" "size=SIZE is required" 1 </dev/null
out=$("$cswap_fuse" --check-config "$dir/missing.conf" 2>&1)
status=$?
check "a missing file is reported with its path ($out)" \
  eval '[[ $status -eq 1 && $out == *"missing.conf: No such file or directory" ]]'

# --config where it stands: before it the file wins, after it the
# command line does (nbdkit shows the size without mounting anything).
if command -v nbdkit >/dev/null && command -v nbdinfo >/dev/null; then
  printf 'size = 1G\nctl = none\n' >"$dir/size.conf"
  size=$(nbdkit -U - "$plugin" "config=$dir/size.conf" size=2G \
         --run 'nbdinfo --size "$uri"' 2>/dev/null)
  check "nbdkit cswap config=FILE size=2G: the later key wins ($size)" \
    test "$size" = $((2 << 30))
  size=$(nbdkit -U - "$plugin" size=2G "config=$dir/size.conf" \
         --run 'nbdinfo --size "$uri"' 2>/dev/null)
  check "nbdkit cswap size=2G config=FILE: the file wins ($size)" \
    test "$size" = $((1 << 30))
  check "nbdkit cswap config=FILE with a bad line fails" \
    eval '! nbdkit -U - "$plugin" "config=$dir/test.conf" --run true 2>/dev/null'
fi

echo "1..$n"
[[ $failed -eq 0 ]]
