#!/bin/bash
# cswap bench: GNU sort of a large generated text file, in memory.
#
# usage: sort-check.sh MIB
#
# Writes about MIB MiB of lines with unique ten-digit keys in a shuffled
# order and words after them (gen-text.py keyed) to a private directory
# on disk and sorts the file with `LC_ALL=C sort -S 1G`: a buffer larger
# than the file, so sort holds all of it (the text and 32 bytes a line)
# in memory and sorts it there with its threads, as one does to sort a
# file that fits: about 1.8 MiB resident per MiB of file (coreutils 9.1:
# 30 MiB at 16 MiB, 58 at 32), and the file's page cache is charged to
# the memory group as well.  Checks its own result without sorting: the
# generator makes the lines again in key order and gives their SHA-256,
# which the output of sort must have; exits 1 when it does not, or when
# a step fails.  The directory is removed at exit.
set -uo pipefail
mib=${1:?usage: $0 MIB}
# shellcheck source-path=SCRIPTDIR source=generated-input.sh
. "$(dirname "${BASH_SOURCE[0]}")/generated-input.sh"

generated_input sort-check keyed "$mib"
# -T: should sort spill after all, its temporary files go to the same place.
digest=$(LC_ALL=C sort -S 1G -T "$dir" "$dir/input" | sha256sum) || fail "sort failed"
check_digest "$mib MiB: sorted" "$digest"
echo "sort-check: $mib MiB of keyed lines sorted, SHA-256 ok"
