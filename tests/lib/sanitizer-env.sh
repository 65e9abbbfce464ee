# cswap: sourced by tests that run the plugin inside nbdkit.  In a
# sanitizer build the plugin needs the sanitizer runtimes, which nbdkit
# (not instrumented) does not load: this preloads them into every command
# the test runs (a function wrapping nbdkit would break `nbdkit … &`,
# whose $! would then be a subshell), with leak checking off: nbdkit's
# and the tools' own allocations at exit are not ours to report.
# Elsewhere it changes nothing.
# shellcheck shell=bash

sanitizer_preload=()
case ${CSWAP_SANITIZE:-none} in
  *address*) sanitizer_preload+=("$(${CC:-cc} -print-file-name=libasan.so)") ;;
esac
case ${CSWAP_SANITIZE:-none} in
  *thread*) sanitizer_preload+=("$(${CC:-cc} -print-file-name=libtsan.so)") ;;
esac
case ${CSWAP_SANITIZE:-none} in
  *undefined*) sanitizer_preload+=("$(${CC:-cc} -print-file-name=libubsan.so)") ;;
esac
if [ ${#sanitizer_preload[@]} -gt 0 ]; then
  LD_PRELOAD=$(IFS=:; echo "${sanitizer_preload[*]}")
  export LD_PRELOAD
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
fi
