# cswap: sourced by tests that run the nbdkit plugin.  Skips (exit 77) when
# nbdkit or libnbd's Python bindings are missing, and sets:
#   CSWAP_PLUGIN   the built plugin
#   LD_PRELOAD     the sanitizer runtimes, in a sanitizer build: nbdkit
#                  itself is not instrumented, so they must load first.
# shellcheck shell=bash

skip () {
  echo "1..0 # SKIP $*"
  exit 77
}

command -v nbdkit >/dev/null || skip "nbdkit is not installed"
/usr/bin/python3 -c 'import nbd' 2>/dev/null ||
  skip "libnbd's Python bindings (python3-libnbd) are not installed"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
CSWAP_PLUGIN=$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so
export CSWAP_PLUGIN

preload=()
case ${CSWAP_SANITIZE:-none} in
  *address*) preload+=("$(${CC:-cc} -print-file-name=libasan.so)") ;;
esac
case ${CSWAP_SANITIZE:-none} in
  *thread*) preload+=("$(${CC:-cc} -print-file-name=libtsan.so)") ;;
esac
case ${CSWAP_SANITIZE:-none} in
  *undefined*) preload+=("$(${CC:-cc} -print-file-name=libubsan.so)") ;;
esac
if [ ${#preload[@]} -gt 0 ]; then
  LD_PRELOAD=$(IFS=:; echo "${preload[*]}")
  export LD_PRELOAD
  # nbdkit's own allocations at exit are not ours to report.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
fi
