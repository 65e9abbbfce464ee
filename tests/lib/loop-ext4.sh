# cswap: sourced by tests that need a small file system of their own:
# loop_ext4 MIB makes an ext4 image of MIB MiB under /var/tmp, loop-mounts
# it at $work/mnt (its device in $dev) and removes it all in an EXIT trap.
# Root only: it prints the TAP skip and exits where it cannot.
# shellcheck shell=bash

loop_ext4 () {
  if [[ $(id -u) -ne 0 ]]; then echo "1..0 # SKIP root only"; exit 0; fi
  for cmd in mkfs.ext4 losetup mount umount; do
    command -v $cmd >/dev/null || { echo "1..0 # SKIP no $cmd"; exit 0; }
  done
  work=$(mktemp -d /var/tmp/cswap-loop-ext4.XXXXXX)
  dev='' mounted=''
  trap loop_ext4_cleanup EXIT
  truncate -s "${1}M" "$work/fs.img"
  mkfs.ext4 -q -F "$work/fs.img" || { echo "Bail out! mkfs.ext4"; exit 1; }
  dev=$(losetup --find --show "$work/fs.img") || { echo "Bail out! losetup"; exit 1; }
  mkdir "$work/mnt"
  mount "$dev" "$work/mnt" && mounted=yes || { echo "Bail out! mount"; exit 1; }
}

loop_ext4_cleanup () {
  [[ -n $mounted ]] && umount "$work/mnt"
  [[ -n $dev ]] && losetup -d "$dev"
  rm -rf "$work"
}
