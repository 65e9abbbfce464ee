#!/bin/bash
# cswap bench: gcc -O2 compiling a large generated C file, then running it.
#
# usage: cc-build.sh MIB
#
# Writes a C program of about MIB MiB (gen-text.py c: some 800 small
# functions a MiB, straight-line 64-bit arithmetic and branches from a
# fixed seed) to a private directory on disk, compiles it with `gcc -O2`
# and runs it.  A compiler is what a small board or VM swaps under when
# it builds its own software: gcc keeps every function of a translation
# unit for its interprocedural passes (209 MiB resident for 1 MiB of this
# source, 347 MiB for 3.7), a heap of small trees and lists walked pass
# after pass.
# Checks its own result: the program must print the number the generator
# worked out; exits 1 when it does not, or when a step fails.  The
# directory is removed at exit.
set -uo pipefail
mib=${1:?usage: $0 MIB}
# shellcheck source-path=SCRIPTDIR source=generated-input.sh
. "$(dirname "${BASH_SOURCE[0]}")/generated-input.sh"

generated_input cc-build c "$mib"
gcc -O2 -x c -o "$dir/program" "$dir/input" || fail "gcc failed"
printed=$("$dir/program") || fail "the compiled program failed"
check_digest "$mib MiB of C: the program's output" "$printed"
echo "cc-build: $mib MiB of C compiled at -O2, its output ok"
