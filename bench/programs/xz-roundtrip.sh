#!/bin/bash
# cswap bench: xz -9 compressing a generated text file and decompressing it.
#
# usage: xz-roundtrip.sh MIB
#
# Writes MIB MiB of generated text (gen-text.py words: lines of words and
# numbers from a fixed seed, compressible as text is) to a private
# directory on disk, compresses it with `xz -9 -T1` (one thread, xz 5.4's
# default, kept where a newer xz would use every core) and decompresses it
# again.  xz -9 sets up a 64 MiB dictionary whatever the input's size (674
# MiB of compressor, xz(1)) but touches only what the input reaches: about
# 9 MiB resident per MiB of input (xz 5.4: 31 MiB at 2 MiB, 86 at 8, 159
# at 16), most of it the match finder's tree, read and written at random,
# the hard case for swap; xz -d needs little (10 MiB at 8 MiB).  Checks
# its own result: the SHA-256 of what xz -d gives back must be the
# generator's; exits 1 when it is not, or when a step fails.  The
# directory is removed at exit.
set -uo pipefail
mib=${1:?usage: $0 MIB}
# shellcheck source-path=SCRIPTDIR source=generated-input.sh
. "$(dirname "${BASH_SOURCE[0]}")/generated-input.sh"

generated_input xz-roundtrip words "$mib"
# Replaces input by input.xz: only the compressed copy is left to check.
xz -9 -T1 "$dir/input" || fail "xz failed"
digest=$(xz -d -c "$dir/input.xz" | sha256sum) || fail "xz -d failed"
check_digest "$mib MiB: decompressed" "$digest"
echo "xz-roundtrip: $mib MiB to $(($(stat -c %s "$dir/input.xz") >> 10)) KiB and back, SHA-256 ok"
