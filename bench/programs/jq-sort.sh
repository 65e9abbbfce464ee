#!/bin/bash
# cswap bench: jq reading a large file of JSON records, sorting them by
# key and printing them.
#
# usage: jq-sort.sh MIB
#
# Writes about MIB MiB of JSON records, one object a line with a unique
# key, in a shuffled order (gen-text.py keyed-json), to a private
# directory on disk, and has jq read them all into one array, sort it by
# key and print each record as a line of text.  jq holds every record as
# its own tree of small allocations (about 11 MiB resident per MiB of
# JSON, jq 1.6), built in the file's order and printed in key order, so
# the printing walks the heap at random: what a program that loads a
# data set and then queries it does.  Checks its own result: the
# generator gives the SHA-256 of the records as text in key order, which
# jq's output must have; exits 1 when it does not, or when a step fails.
# The directory is removed at exit.
set -uo pipefail
mib=${1:?usage: $0 MIB}
# shellcheck source-path=SCRIPTDIR source=generated-input.sh
. "$(dirname "${BASH_SOURCE[0]}")/generated-input.sh"

generated_input jq-sort keyed-json "$mib"
digest=$(jq -nr '[inputs] | sort_by(.key) | .[] | "\(.key) \(.words | join(" ")) \(.n)"' \
           "$dir/input" | sha256sum) || fail "jq failed"
check_digest "$mib MiB of JSON: sorted and printed" "$digest"
echo "jq-sort: $mib MiB of JSON records sorted, SHA-256 ok"
