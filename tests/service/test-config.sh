#!/bin/bash
# shellcheck disable=SC2016,SC1003  # eval and --run strings expand later, on purpose
# cswap: the configuration file (daemon/config/config-file.c) through
# `cswap-fuse --check-config` and `cswap check`: every key cswap.conf(5)
# documents is accepted, every device option the daemons take is
# documented, bad keys and values are rejected with the file and line,
# config= in nbdkit reads the file in place (later keys override it).
# Sizes written as expressions of the RAM, on a simulated machine
# (CSWAP_TEST_RAM_MIB); drop-ins in lexical order, replaced and masked
# the systemd way, and the listing of where each key came from; cswap=0
# on a simulated kernel command line.
set -uo pipefail
: "${CSWAP_BUILD_ROOT:?run through meson test}"
source "$(dirname "$0")/../lib/sanitizer-env.sh"
: "${CSWAP_SOURCE_ROOT:?run through meson test}"
cswap_fuse=$CSWAP_BUILD_ROOT/daemon/cswap-fuse
plugin=$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so
helper=$CSWAP_BUILD_ROOT/systemd/cswap
manpage=$CSWAP_SOURCE_ROOT/man/cswap.conf.5
export CSWAP_FUSE=$cswap_fuse
ends_ok=$'\n''ok$'

n=0 failed=0
check () {                      # check NAME COMMAND…
  local name=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $name"
  else failed=$((failed + 1)); echo "not ok $n - $name"; fi
}
dir=$(mktemp -d /tmp/cswap-config.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# The package's drop-in directory, here instead of /usr/lib; the default
# backing file's, here instead of /var/lib/cswap.
export CSWAP_VENDOR_CONFIG_DIR=$dir/vendor CSWAP_BACKING_DIR=$dir/lib

# A valid and a bad value for every key (a key documented without one
# here fails).
option_dir=$dir
source "$(dirname "$0")/../lib/option-values.sh"

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
  for other in ${needs[$key]:-}; do extra+=$'\n'"$other = ${good[$other]}"; done
  check_file "documented key $key = ${good[$key]} is accepted" "$ends_ok" 0 \
    <<<"$extra"$'\n'"$key = ${good[$key]}"
  [[ $key == level || $key == codec ]] || all+="$key = ${good[$key]}"$'\n'
done
check_file "every key at once, with comments and blank lines" "$ends_ok" 0 <<EOF2
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

# The remote device's keys that only make sense together.
check_file "frontend = remote with its server is accepted" "$ends_ok" 0 \
  <<<$'frontend = remote\nremote = swap.example.net'
check_file "frontend = remote without remote = HOST is refused" \
  "test.conf: frontend = remote: no server \\(remote = HOST\\)" 1 <<<'frontend = remote'
check_file "a remote-* key without remote = HOST is refused, by name" \
  "test.conf: remote-export: no server" 1 <<<'remote-export = c1'
check_file "a client certificate without its key is refused" \
  "remote-certfile and remote-keyfile: one without the other" 1 \
  <<<$'remote = h\nremote-certfile = /etc/cswap/client.pem'
check_file "frontend = remote has no ladder to follow" \
  "ladder-online = follow: frontend = remote is one device" 1 \
  <<<$'frontend = remote\nremote = h\nladder-online = follow'

check_file "an unknown key is rejected with its line" \
  "test.conf:2: no-such-key=1: unknown" 1 <<<$'size = 1G\nno-such-key = 1'
check_file "a line without '=' is rejected with its line" \
  "test.conf:3: size 1G: expected key = value" 1 <<<$'# c\n\nsize 1G'
check_file "a key given twice is rejected, naming both lines" \
  "test.conf:4: size: given twice \\(first on line 1\\)" 1 \
  <<<$'size = 1G\ncodec = lz4\n\nsize = 2G'
check_file "a line with no key is rejected" "test.conf:1: no key before '='" 1 \
  <<<$' = 1G'
check_file "a file without size is accepted (the size follows the machine)" \
  "$ends_ok" 0 <<<'codec = lz4'
check_file "a level the codec does not take is reported at its line" \
  "test.conf:3: level=3: lz4 takes no level" 1 <<<$'size = 1G\ncodec = lz4\nlevel = 3'
# What cold-codec is for: lz4 for new pages, zstd for those that stay.
check_file "codec = lz4 with cold-codec = zstd is accepted and listed" \
  "cold-codec = zstd  # $dir/test.conf:3$ends_ok" 0 \
  <<<$'size = 1G\ncodec = lz4\ncold-codec = zstd'
check_file "an empty file is accepted" "$ends_ok" 0 </dev/null
# ladder-online = follow needs the ladder (fuse or nbd, not remote) and
# the control socket the steps are handed over on.
check_file "ladder-online = follow with the fuse front end is accepted" \
  "ladder-online = follow  # $dir/test.conf:2"$'\n'"ladder-headroom = 8M  # $dir/test.conf:3$ends_ok" 0 \
  <<<$'size = 1G\nladder-online = follow\nladder-headroom = 8M'
check_file "ladder-online = follow with frontend = nbd is accepted" \
  "ladder-online = follow  # $dir/test.conf:1"$'\n'"frontend = nbd  # $dir/test.conf:2$ends_ok" 0 \
  <<<$'ladder-online = follow\nfrontend = nbd'
check_file "ladder-online = follow with frontend = ublk is accepted" \
  "ladder-online = follow  # $dir/test.conf:1"$'\n'"frontend = ublk  # $dir/test.conf:2$ends_ok" 0 \
  <<<$'ladder-online = follow\nfrontend = ublk'
check_file "ladder-online = follow with ctl = none is refused" \
  "^cswap-fuse: $dir/test.conf: ladder-online = follow: .*ctl = none" 1 \
  <<<$'ladder-online = follow\nctl = none'
# auto, the default, is follow only where it can be: never refused.
check_file "ladder-online = auto with frontend = nbd and ctl = none is accepted" \
  "ladder-online = auto  # $dir/test.conf:1"$'\n'"frontend = nbd  # $dir/test.conf:2"$'\n'"ctl = none  # $dir/test.conf:3$ends_ok" 0 \
  <<<$'ladder-online = auto\nfrontend = nbd\nctl = none'
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
  size=$(CSWAP_TEST_RAM_MIB=256 nbdkit -U - "$plugin" 'size=min(ram / 2, 4096)' \
         ctl=none --run 'nbdinfo --size "$uri"' 2>/dev/null)
  check "nbdkit cswap size=min(ram / 2, 4096) with 256 MiB of RAM: 128 MiB ($size)" \
    test "$size" = $((128 << 20))
  size=$(CSWAP_TEST_RAM_MIB=256 nbdkit -U - "$plugin" ctl=none \
         --run 'nbdinfo --size "$uri"' 2>/dev/null)
  check "nbdkit cswap without size: the default, 128 MiB of 256 ($size)" \
    test "$size" = $((128 << 20))
  printf 'size = 1G\ncodec = lzo\n' >"$dir/test.conf"
  check "nbdkit cswap config=FILE with a bad line fails" \
    eval '! nbdkit -U - "$plugin" "config=$dir/test.conf" --run true 2>/dev/null'
fi

# ------------------------------------------------------------ sizes ----
# Sizes that follow the machine: the listing says what they come to.
export CSWAP_TEST_RAM_MIB=2048
check_file "size = min(ram / 2, 4096) with 2 GiB of RAM is 1024 MiB" \
  "size = min\(ram / 2, 4096\)  # $dir/test.conf:1, 1024 MiB$ends_ok" 0 \
  <<<'size = min(ram / 2, 4096)'
CSWAP_TEST_RAM_MIB=16384 check_file \
  "size = min(ram / 2, 4096) with 16 GiB of RAM is 4096 MiB" \
  "size = min\(ram / 2, 4096\)  # $dir/test.conf:1, 4096 MiB$ends_ok" 0 \
  <<<'size = min(ram / 2, 4096)'
check_file "size = 50% of 2 GiB is 1024 MiB" \
  "size = 50%  # $dir/test.conf:1, 1024 MiB" 0 <<<'size = 50%'
check_file "size = ram / 3 is rounded down to a page" \
  "size = ram / 3  # $dir/test.conf:1, 699048 KiB" 0 <<<'size = ram / 3'
check_file "pool-limit = ram / 4 of 2 GiB is 512 MiB" \
  "pool-limit = ram / 4  # $dir/test.conf:2, 512 MiB" 0 \
  <<<$'size = 1G\npool-limit = ram / 4'
check_file "pool-limit = 25% still means a quarter of RAM" \
  "pool-limit = 25%  # $dir/test.conf:2, 512 MiB" 0 <<<$'size = 1G\npool-limit = 25%'
check_file "without size, the default is shown with what it comes to" \
  "size = min\(ram / 2, 4096\)  # default, 1024 MiB" 0 <<<'codec = lz4'
CSWAP_TEST_RAM_MIB=16384 check_file "the default follows the machine (16 GiB)" \
  "size = min\(ram / 2, 4096\)  # default, 4096 MiB" 0 </dev/null

# Each kind of bad expression, with the line and what was wrong.
bad_sizes=(
  "size = min(ram / 2 4096)|size=min(ram / 2 4096): expected ',' or ')' at column 13, found '4096)'"
  "size = (ram / 2|expected ')' at column 9, found the end"
  "size = ram / (ram - ram)|size=ram / (ram - ram): division by zero at column 5"
  "size = 1024 - ram|the result is -1024 MiB: a size must be more than zero"
  "size = ram - ram|the result is 0 MiB: a size must be more than zero"
  "size = ram * 99999999999|overflow at column 5: a value beyond 16 EiB"
  "size = rom / 2|unknown name 'rom' at column 1: use ram, min or max"
  "size = min(ram / 2, 4G)|unexpected 'G' at column 15: numbers in an expression are MiB"
  "size = ram * 8192|16384 GiB: more than cswap can address"
  "pool-limit = ram / 0|pool-limit=ram / 0: division by zero at column 5"
  "pool-limit = ram - 4096|pool-limit=ram - 4096: the result is -2048 MiB"
)
refused_on_line_2 () {          # refused_on_line_2 MESSAGE
  [[ $status -eq 1 && $out == "cswap-fuse: $dir/test.conf:2: "*"$1"* ]]
}
for entry in "${bad_sizes[@]}"; do
  line=${entry%%|*}
  printf 'codec = zstd\n%s\n' "$line" >"$dir/test.conf"
  out=$("$cswap_fuse" --check-config "$dir/test.conf" 2>&1)
  status=$?
  check "'$line' is refused on line 2 ($out)" refused_on_line_2 "${entry#*|}"
done

# --------------------------------------------------------- drop-ins ----
conf=$dir/drop/cswap.conf
admin=$conf.d
vendor=$CSWAP_VENDOR_CONFIG_DIR/cswap.conf.d
mkdir -p "$admin" "$vendor"
printf 'size = 1G\ncodec = lz4\n' >"$conf"
# Written out of order on purpose: the order read is the names', and
# "9-late" sorts after "10-early" and the package's "50-vendor".
printf 'size = 3G\n' >"$admin/9-late.conf"
printf 'size = 2G\npriority = 20\n' >"$admin/10-early.conf"
printf 'size = 5G\npool-limit = 10%%\n' >"$vendor/50-vendor.conf"
printf 'priority = 9\n' >"$vendor/60-same.conf"
printf 'priority = 8\n' >"$admin/60-same.conf"
printf 'frontend = nbd\n' >"$vendor/70-masked.conf"
ln -s /dev/null "$admin/70-masked.conf"
# Not drop-ins: another suffix, a hidden file, a backup.
printf 'size = 7G\n' >"$admin/README"
printf 'size = 7G\n' >"$admin/.hidden.conf"
printf 'size = 7G\n' >"$admin/9-late.conf~"

out=$(bash "$helper" -c "$conf" check 2>&1)
status=$?
sed 's/^/# /' <<<"$out"
check "cswap check accepts the merged configuration (status $status)" \
  eval '[[ $status -eq 0 && $out =~ $ends_ok ]]'
has_line () { grep -qxF -- "$1" <<<"$out"; }
check "files are read in the lexical order of their names, wherever they are" \
  test "$(sed -n 's|^# \(/[^:]*\).*|\1|p' <<<"$out" | tr '\n' ' ')" = \
       "$conf $admin/10-early.conf $vendor/50-vendor.conf $admin/60-same.conf $admin/70-masked.conf $admin/9-late.conf "
check "the last file to give a key wins, and is named with its line" \
  has_line "size = 3G  # $admin/9-late.conf:1, 3072 MiB"
check "a key no later file gives keeps its place in the main file" \
  has_line "codec = lz4  # $conf:2"
check "a package drop-in's key counts where it sorts" \
  eval 'grep -q "^pool-limit = 10%  # $vendor/50-vendor.conf:2, " <<<"$out"'
check "/etc's drop-in replaces the package's of the same name" \
  has_line "priority = 8  # $admin/60-same.conf:1"
check "and the listing says so" has_line "# $admin/60-same.conf: replaces $vendor/60-same.conf"
check "a drop-in linked to /dev/null masks the package's" \
  eval '! grep -q "^frontend" <<<"$out"'
check "and the listing says so" \
  has_line "# $admin/70-masked.conf: linked to /dev/null, masks $vendor/70-masked.conf"
check "only *.conf files that are not hidden are read" eval '! grep -q 7G <<<"$out"'
if command -v nbdkit >/dev/null && command -v nbdinfo >/dev/null; then
  size=$(nbdkit -U - "$plugin" ctl=none "config=$conf" \
         --run 'nbdinfo --size "$uri"' 2>/dev/null)
  check "nbdkit cswap config=FILE reads the same drop-ins ($size)" \
    test "$size" = $((3 << 30))
fi

printf 'size = 1G\ncodec = lzo\n' >"$admin/95-bad.conf"
out=$(bash "$helper" -c "$conf" check 2>&1)
status=$?
check "a bad value in a drop-in: status 2, the drop-in's line ($out)" \
  eval '[[ $status -eq 2 && $out == "cswap: invalid configuration: $admin/95-bad.conf:2: codec=lzo: unknown codec"* ]]'
printf 'size = 1G\npriority = 1\nsize = 2G\n' >"$admin/95-bad.conf"
out=$(bash "$helper" -c "$conf" check 2>&1)
check "a key twice in one drop-in is still an error ($out)" \
  eval '[[ $out == *"$admin/95-bad.conf:3: size: given twice (first on line 1)" ]]'
printf 'level = 5\n' >"$admin/95-bad.conf"
printf 'codec = lz4\n' >"$admin/96-codec.conf"
out=$(bash "$helper" -c "$conf" check 2>&1)
check "a level the final codec does not take is placed at its line ($out)" \
  eval '[[ $out == *"$admin/95-bad.conf:1: level=5: lz4 takes no level" ]]'
rm "$admin/95-bad.conf" "$admin/96-codec.conf"

# The helper takes its service keys from the merge: a drop-in's frontend
# and ctl decide what `cswap run` starts.  Stand-ins for the daemons
# record their arguments (cswap-fuse's still checks the configuration).
mkdir "$dir/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s"\n' "$dir/nbdkit.args" >"$dir/bin/nbdkit"
printf '#!/bin/sh\n[ "$1" = --check-config ] && exec "%s" "$@"\nprintf "%%s\\n" "$@" >"%s"\n' \
  "$cswap_fuse" "$dir/cswap-fuse.args" >"$dir/bin/cswap-fuse"
chmod +x "$dir/bin/nbdkit" "$dir/bin/cswap-fuse"
printf 'frontend = nbd\nctl = %s\nmountpoint = %s\n' "$dir/ctl.sock" "$dir/mnt" \
  >"$admin/80-nbd.conf"
# run_helper CMDLINE COMMAND: the helper on a simulated kernel command line
# (written as given: /proc/cmdline ends in a newline).
run_helper () {
  printf '%s' "$1" >"$dir/cmdline"
  rm -f "$dir/nbdkit.args" "$dir/cswap-fuse.args"
  PATH=$dir/bin:$PATH CSWAP_FUSE=$dir/bin/cswap-fuse \
    CSWAP_PROC_CMDLINE=$dir/cmdline CSWAP_STATE_DIR=$dir/state \
    bash "$helper" -c "$conf" "$2" 2>&1
}
if [[ $(id -u) -eq 0 ]]; then
  out=$(run_helper $'BOOT_IMAGE=/vmlinuz ro quiet\n' run)
  check "cswap run starts the frontend a drop-in chose, with its ctl ($out)" \
    eval 'grep -qxF "ctl=$dir/ctl.sock" "$dir/nbdkit.args" && grep -qxF "config=$conf" "$dir/nbdkit.args"'
  out=$(run_helper $'ro cswap=01 nocswap=0 cswap=0x\n' run)
  check "only the word cswap=0 turns cswap off" test -e "$dir/nbdkit.args"
fi

# frontend = auto: ublk where the kernel has the driver (a stand-in
# /dev/ublk-control in CSWAP_DEV_DIR), fuse where it has not; `cswap run`
# then starts cswap-ublk over the ladder's windows of the size the
# configuration makes.
printf '#!/bin/sh\n[ "$1" = --check-config ] && exec "%s" "$@"\n' "$cswap_fuse" >"$dir/bin/cswap-ublk"
printf 'for a; do [ "$a" = --print-size ] && { echo 268435456; exit 0; }; done\n' >>"$dir/bin/cswap-ublk"
printf 'printf "%%s\\n" "$@" >"%s"\n' "$dir/cswap-ublk.args" >>"$dir/bin/cswap-ublk"
chmod +x "$dir/bin/cswap-ublk"
mkdir -p "$dir/dev-ublk" "$dir/dev-none"
: >"$dir/dev-ublk/ublk-control"
printf 'frontend = auto\nladder-step = 64M\n' >"$admin/81-auto.conf"
# front_end DEV_DIR: what `cswap check` says of the front end.
front_end () {
  PATH=$dir/bin:$PATH CSWAP_FUSE=$dir/bin/cswap-fuse CSWAP_UBLK=$dir/bin/cswap-ublk \
    CSWAP_DEV_DIR=$1 bash "$helper" -c "$conf" check 2>&1 | sed -n 's/^# front end: //p'
}
check "auto with the ublk driver: ublk, saying why ($(front_end "$dir/dev-ublk"))" \
  eval '[[ $(front_end "$dir/dev-ublk") == "auto: ublk "* ]]'
check "auto without it: fuse, saying why ($(front_end "$dir/dev-none"))" \
  eval '[[ $(front_end "$dir/dev-none") == "auto: fuse "* ]]'
# kernel.shm_rmid_forced=1 (a stand-in /proc/sys): the store of a
# killed cswap-ublk is destroyed with it; check says so for ublk alone.
rmid_forced () {
  mkdir -p "$dir/proc-sys/kernel"
  echo "$2" >"$dir/proc-sys/kernel/shm_rmid_forced"
  PATH=$dir/bin:$PATH CSWAP_FUSE=$dir/bin/cswap-fuse CSWAP_UBLK=$dir/bin/cswap-ublk \
    CSWAP_DEV_DIR=$1 CSWAP_PROC_SYS=$dir/proc-sys bash "$helper" -c "$conf" check 2>&1 \
    | grep '^# kernel.shm_rmid_forced=1: '
}
check "cswap check with ublk and kernel.shm_rmid_forced=1 says the store dies with its daemon" \
  eval '[[ $(rmid_forced "$dir/dev-ublk" 1) == *"killed daemon'"'"'s pages are lost"*"kernel.shm_rmid_forced=0"* ]]'
check "and nothing with shm_rmid_forced=0, nor with fuse" \
  eval '[[ -z $(rmid_forced "$dir/dev-ublk" 0) && -z $(rmid_forced "$dir/dev-none" 1) ]]'
if [[ $(id -u) -eq 0 ]]; then
  rm -f "$dir/cswap-ublk.args"
  out=$(printf 'ro\n' >"$dir/cmdline"; PATH=$dir/bin:$PATH CSWAP_FUSE=$dir/bin/cswap-fuse \
    CSWAP_UBLK=$dir/bin/cswap-ublk CSWAP_DEV_DIR=$dir/dev-ublk \
    CSWAP_PROC_CMDLINE=$dir/cmdline CSWAP_STATE_DIR=$dir/state bash "$helper" -c "$conf" run 2>&1)
  check "cswap run with ublk serves the ladder's windows of 256 MiB ($out)" \
    eval 'grep -qxF "0:67108864,67108864:67108864,134217728:134217728" "$dir/cswap-ublk.args" \
          && grep -qxF -- "--device-list" "$dir/cswap-ublk.args"'
fi
rm "$admin/81-auto.conf"

# ------------------------------------------ auto, as cswap up reads it ----
# resolved MEMTOTAL_KIB CONFIG: "LADDER_ONLINE LADDER_FLOOR" as the
# helper's read_config leaves them for CONFIG (a --check-config listing),
# on a machine of MEMTOTAL_KIB.
resolved ()
{
  printf 'MemTotal:       %s kB\n' "$1" >"$dir/meminfo"
  (CSWAP_MEMINFO=$dir/meminfo source "$helper" \
     && merged_config=$2 && read_config && echo "$ladder_online $ladder_floor")
}
check "auto on 1 GiB of RAM: follow, a floor of half the RAM" \
  test "$(resolved 1048576 '')" = "follow 536870912"
check "auto on 16 GiB: the floor stops at 4 GiB" \
  test "$(resolved 16777216 '')" = "follow 4294967296"
check "auto with frontend = nbd: follow (a window export a step)" \
  test "$(resolved 1048576 'frontend = nbd')" = "follow 536870912"
check "auto with frontend = ublk: follow (a ublk device a step)" \
  test "$(resolved 1048576 'frontend = ublk')" = "follow 536870912"
check "auto with frontend = remote: all (one device)" \
  test "$(resolved 1048576 $'frontend = remote\nremote = example.org')" = "all 536870912"
check "auto with ctl = none: all (nothing to hand the ladder over on)" \
  test "$(resolved 1048576 'ctl = none')" = "all 536870912"
# settled BACKING CONFIG: ladder-online once the backing file is chosen
# (BACKING, empty for none), as cswap up and cswap check settle it.
settled ()
{
  printf 'MemTotal:       1048576 kB\n' >"$dir/meminfo"
  (CSWAP_MEMINFO=$dir/meminfo source "$helper" \
     && merged_config=$2 && read_config && backing_path=$1 \
     && backing_settle_ladder && echo "$ladder_online")
}
check "auto with a backing file: all (the kept copies go to the file)" \
  test "$(settled /var/lib/cswap/backing 'frontend = ublk')" = all
check "auto without one: follow still" \
  test "$(settled '' 'frontend = ublk')" = follow
check "ladder-online = follow with a backing file: follow, as written" \
  test "$(settled /var/lib/cswap/backing $'frontend = ublk\nladder-online = follow')" = follow
check "auto with ladder-step = 0: all (no ladder)" \
  test "$(resolved 1048576 'ladder-step = 0')" = "all 536870912"
check "given values stay as given" \
  test "$(resolved 1048576 $'ladder-online = all\nladder-floor = 128M')" = "all 128M"

# ------------------------------------------------ the backing file ----
# Where cswap.conf names none, `cswap run` gives the daemon
# CSWAP_BACKING_DIR/backing, sized to the device or half the free space
# there, whichever is less; `cswap check` says which file and why, or why
# none: backing = none, or a directory in RAM (tmpfs) (issue 63).
bconf=$dir/backing.conf
printf 'frontend = nbd\nsize = 256M\nctl = %s\nmountpoint = %s\n' "$dir/ctl.sock" "$dir/mnt" >"$bconf"
# backing_check [KEY=VALUE…]: what `cswap check` says of the backing file.
backing_check () {
  env "$@" bash "$helper" -c "$bconf" check 2>&1 | sed -n 's/^# backing file: //p'
}
# backing_run [KEY=VALUE…]: `cswap run`'s stand-in nbdkit's arguments.
backing_run () {
  printf 'ro\n' >"$dir/cmdline"
  rm -f "$dir/nbdkit.args"
  env PATH="$dir/bin:$PATH" CSWAP_FUSE="$dir/bin/cswap-fuse" CSWAP_PROC_CMDLINE="$dir/cmdline" \
    CSWAP_STATE_DIR="$dir/state" "$@" bash "$helper" -c "$bconf" run >/dev/null 2>&1
  cat "$dir/nbdkit.args" 2>/dev/null
}
said=$(backing_check)
free=$(stat -f -c '%a * %S' "$dir/lib" 2>/dev/null) && free=$((free))
expect=$((256 << 20)); ((free / 2 >= expect)) || expect=$((free / 2 >> 20 << 20))
check "no backing in cswap.conf: the default file, sized, saying why ($said)" \
  eval '[[ $said == "default, $dir/lib/backing: $((expect >> 20)) MiB, the device"* ]]'
if [[ $(id -u) -eq 0 ]]; then
  args=$(backing_run)
  check "cswap run hands the daemon that file and its size" \
    eval 'grep -qxF "backing=$dir/lib/backing" <<<"$args" && grep -qxF "backing-size=$expect" <<<"$args"'
fi
printf 'backing = none\n' >>"$bconf"
said=$(backing_check)
check "backing = none: none, saying so ($said)" \
  eval '[[ $said == "none: backing = none in $bconf" ]]'
if [[ $(id -u) -eq 0 ]]; then
  args=$(backing_run)
  check "and cswap run gives the daemon none" eval '! grep -q "^backing" <<<"$args"'
fi
sed -i '$d' "$bconf"
if [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
  said=$(backing_check CSWAP_BACKING_DIR=/dev/shm)
  check "a directory on tmpfs: none, saying why ($said)" \
    eval '[[ $said == "none: /dev/shm is on tmpfs, in RAM: a backing file there saves no memory" ]]'
fi
printf 'backing = %s\n' "$dir/elsewhere" >>"$bconf"
said=$(backing_check)
check "backing = PATH: that file ($said)" eval '[[ $said == "backing = $dir/elsewhere in $bconf" ]]'

# ----------------------------------------------------------- cswap=0 ----
rm -rf "$dir/state"
for command in up run; do
  out=$(run_helper $'BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro cswap=0 quiet\n' $command)
  status=$?
  check "cswap $command refuses under cswap=0, status 2 ($out)" \
    eval '[[ $status -eq 2 && $out == "cswap: cswap=0 is on the kernel command line ($dir/cmdline): not starting"* ]]'
  check "and starts nothing" \
    eval '[[ ! -e $dir/nbdkit.args && ! -e $dir/cswap-fuse.args && ! -e $dir/state ]]'
done
out=$(run_helper 'ro cswap=0' up)
check "cswap=0 counts as the last word without a newline ($out)" \
  eval '[[ $out == "cswap: cswap=0 is on the kernel command line"* ]]'
out=$(run_helper $'ro cswap=0\n' check)
status=$?
check "cswap check still checks under cswap=0, and says so" \
  eval '[[ $status -eq 0 && $out == "# cswap=0 is on the kernel command line"* && $out =~ $ends_ok ]]'
condition=$(sed -n 's/^ConditionKernelCommandLine=//p' "$CSWAP_BUILD_ROOT/systemd/cswap.service")
check "the unit has a kernel command line condition ($condition)" test "$condition" = '!cswap=0'
if systemd-analyze condition 'ConditionKernelCommandLine=!x' >/dev/null 2>&1; then
  # SYSTEMD_PROC_CMDLINE stands in for /proc/cmdline.
  check "the unit's condition fails under cswap=0" \
    eval '! SYSTEMD_PROC_CMDLINE="ro cswap=0 quiet" systemd-analyze condition "ConditionKernelCommandLine=$condition" >/dev/null 2>&1'
  check "and holds without it" \
    eval 'SYSTEMD_PROC_CMDLINE="ro cswap=01 nocswap=0" systemd-analyze condition "ConditionKernelCommandLine=$condition" >/dev/null 2>&1'
fi

echo "1..$n"
[[ $failed -eq 0 ]]
