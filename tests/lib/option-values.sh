# shellcheck shell=bash
# cswap tests: a valid and a bad value for every key of cswap.conf(5), the
# device options the daemons take and the service keys, for the tests
# that try each one (tests/service/test-config.sh,
# tests/daemon/test-fuse-option-forms.sh).  The test sets option_dir, a
# directory of its own, before sourcing: paths in the values are there.
# shellcheck disable=SC2034  # used by the tests that source this

# A valid value for every key.
declare -A good=(
  [size]=1G [codec]=lz4 [level]=3 [cold-codec]=zstd [cold-after]=30
  [pool-limit]=25% [huge-threshold]=3000
  [max-zspage-pages]=4 [backing]=$option_dir/backing [backing-size]=64M
  [backing-prealloc]=no [backing-encrypt]=no [accept-threshold]=80 [writeback-batch]=32
  [idle-writeback]=60 [writeback-limit]=400M [writeback-burst]=64M
  [read-writeback]=yes [ctl]=none [ctl-uid]=1000 [reserve]=1%
  [lock-memory]=no [core-dump]=yes [compact]=off [compact-threshold]=25
  [transport]=classic
  [frontend]=nbd [priority]=5 [mountpoint]=/run/cswap/other
  [ladder-step]=32M [halt-poll]=keep [min-free]=keep [page-cluster]=keep [zswap]=keep
  # Not follow: with every key at once, frontend = nbd and ctl = none
  # refuse it (test-config.sh tries follow on its own).
  [ladder-online]=all [ladder-headroom]=16M [ladder-floor]=256M
  [remote]=swap.example.net [remote-port]=10810 [remote-export]="client 7"
  [remote-connections]=2 [remote-timeout]=60 [remote-persist]=120
  [remote-certfile]=/etc/cswap/client.pem [remote-keyfile]=/etc/cswap/client.key
  [remote-cacertfile]=/etc/cswap/ca.pem [remote-tlshostname]=swap.example.net
)
# The lines a key needs beside it to be valid alone: a remote-* key its
# server, a client certificate its key and the other way round.
declare -A needs=(
  [remote-port]=remote [remote-export]=remote [remote-connections]=remote
  [remote-timeout]=remote [remote-persist]=remote [remote-cacertfile]=remote
  [remote-tlshostname]=remote
  [remote-certfile]="remote remote-keyfile" [remote-keyfile]="remote remote-certfile"
)
# And a bad one, with a word of the expected message.
declare -A bad=(
  [size]="3|multiple of 4096" [codec]="lzo|unknown codec" [level]="x|"
  [cold-codec]="lz4|unknown cold codec" [cold-after]="0|out of range .1..2592000."
  [pool-limit]="200%|" [huge-threshold]="0|" [max-zspage-pages]="17|"
  [backing]="|" [backing-size]="lots|" [backing-prealloc]="maybe|yes or no"
  [backing-encrypt]="perhaps|yes or no"
  [accept-threshold]="0|" [writeback-batch]="257|" [idle-writeback]="-1|"
  [writeback-limit]="4095|size out of range .0, or 8K..128T"
  [writeback-burst]="129T|size out of range .0, or 8K..128T"
  [read-writeback]="often|yes or no"
  [ctl]="|" [ctl-uid]="root|" [reserve]="8X|suffix"
  [lock-memory]="maybe|yes or no" [core-dump]="always|yes or no"
  [compact]="sometimes|auto or off"
  [compact-threshold]="0|" [transport]="ring|auto, uring or classic"
  [frontend]="tcp|auto, fuse, nbd, remote or ublk"
  [priority]="40000|" [mountpoint]="relative/path|absolute"
  [ladder-step]="1000|4 KiB pages" [halt-poll]="always|auto or keep"
  [min-free]="never|auto or keep" [page-cluster]="5|auto or keep"
  [zswap]="no|off or keep"
  [ladder-online]="some|auto, all or follow" [ladder-headroom]="1M|4M to 1T"
  [ladder-floor]="half|auto or a size"
  [remote]="-h|a host name or address" [remote-port]="0|out of range"
  [remote-export]="$(printf '%04097d' 0)|4096 bytes"
  [remote-connections]="17|out of range" [remote-timeout]="-1|out of range"
  [remote-persist]="86401|out of range"
  [remote-certfile]="client.pem|absolute path" [remote-keyfile]="a key|absolute path"
  [remote-cacertfile]="ca.pem|absolute path" [remote-tlshostname]="a b|a host name"
)

