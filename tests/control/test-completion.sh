#!/bin/bash
# cswap: the bash completion of cswapctl and cswap, sourced in this bash
# and called as bash calls it, with COMP_WORDS and COMP_CWORD: commands,
# options, the columns after --output (in each form bash splits it into),
# settings, file names, and no command after a command.  Needs no daemon.
set -uo pipefail
source "$(dirname "$0")/../lib/tap.sh"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
cswapctl=$CSWAP_BUILD_ROOT/control/cswapctl
cswap=$CSWAP_BUILD_ROOT/systemd/cswap
completion=$CSWAP_SOURCE_ROOT/completion
man=$CSWAP_SOURCE_ROOT/man/cswapctl.8

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/ctl.sock" "$tmp/cswap.conf"

source "$completion/cswapctl"
source "$completion/cswap"

# completes PROGRAM WORD... : EXPECTED...: completing the last WORD on
# PROGRAM's line offers EXPECTED, in any order.
completes () {
  local program=$1 words=() function
  shift
  while [ "$1" != : ]; do
    words+=("$1")
    shift
  done
  shift
  function=$(complete -p "${program##*/}" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
  COMP_WORDS=("$program" "${words[@]}")
  COMP_CWORD=${#words[@]}
  COMPREPLY=()
  "$function" "$program" "${COMP_WORDS[COMP_CWORD]}" \
    "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
  local got want
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || echo "# got: $got"
  [ "$got" = "$want" ]
}

check "complete -p: both programs" \
  eval 'complete -p cswapctl cswap >/dev/null'

# ---------------------------------------------------------- cswapctl ----

check "cswapctl: every command" \
  completes "$cswapctl" '' : stats status classes compact recompress \
    writeback get set metrics ladder exports help
check "cswapctl: commands by prefix" completes "$cswapctl" st : stats status
check "cswapctl: options by prefix" \
  completes "$cswapctl" --o : --output --output-all
check "cswapctl: every long option" \
  completes "$cswapctl" -- : --socket --output --output-all --bytes --raw \
    --noheadings --json --watch --help --version
# shellcheck disable=SC2046  # one word a column
check "cswapctl --output: every column of --output help" \
  completes "$cswapctl" --output '' : \
    $("$cswapctl" --output help | sed -n 's/^  \([A-Z][A-Z-]*\) .*/\1/p')
check "cswapctl -o: after a comma, in capitals, what is not listed yet" \
  completes "$cswapctl" -o name,me : name,MEM-NOW name,MEM-USED \
    name,MEM-LIMIT name,META
check "cswapctl -o: a listed column is not offered again" \
  completes "$cswapctl" -o SOCKET,MEM-NOW,SO :
check "cswapctl -o +LIST: the + stays" \
  completes "$cswapctl" -o +DISK : +DISKSIZE +DISK-USED +DISK-ERRORS
check "cswapctl --output=LIST, split at = as bash does" \
  completes "$cswapctl" --output = COMP : COMPR COMP-RATIO
check "cswapctl --output=LIST, one word" \
  completes "$cswapctl" --output=COMP : COMPR COMP-RATIO
check "cswapctl --socket: file names" \
  completes "$cswapctl" --socket "$tmp/ctl" : "$tmp/ctl.sock"
check "cswapctl: an option's value is not the command" \
  completes "$cswapctl" --socket = "$tmp/ctl.sock" -o NAME g : get
# shellcheck disable=SC2046  # one word a setting
check "cswapctl get: the settings of cswapctl(8)" \
  completes "$cswapctl" get '' : \
    $(sed -n '/^\.SH SETTINGS/,/^\.SH /s/^\.B[RI]* \([a-z\\-]*\).*/\1/p' "$man" |
      sed 's/\\-/-/g')
check "cswapctl set: a setting by prefix" \
  completes "$cswapctl" set co : codec cold-codec cold-after
check "cswapctl set codec: the codecs" \
  completes "$cswapctl" set codec '' : lz4 zstd
check "cswapctl set cold-codec: none and the codecs" \
  completes "$cswapctl" set cold-codec '' : none zstd
check "cswapctl set cold-after: nothing to offer" \
  completes "$cswapctl" set cold-after '' :
check "cswapctl set level: nothing to offer" \
  completes "$cswapctl" set level '' :
check "cswapctl writeback: its arguments" \
  completes "$cswapctl" writeback '' : idle= max= huge
check "cswapctl stats: no argument" completes "$cswapctl" stats '' :

# ------------------------------------------------------------- cswap ----

check "cswap: every command" \
  completes "$cswap" '' : up down status check run attach detach tune untune remote-up remote-down
check "cswap: every long option" \
  completes "$cswap" - : --config --timeout --pid --help --version
check "cswap --config: file names" \
  completes "$cswap" --config "$tmp/cs" : "$tmp/cswap.conf"
check "cswap --config=FILE: file names" \
  completes "$cswap" --config = "$tmp/cs" : "$tmp/cswap.conf"
check "cswap: the command after -c FILE and --timeout N" \
  completes "$cswap" -c "$tmp/cswap.conf" --timeout 30 d : down detach
check "cswap: one command, then nothing" completes "$cswap" up '' :

done_testing
