# cswap: sourced by tests that run the nbdkit plugin.  Skips (as tap.sh) when
# nbdkit or libnbd's Python bindings are missing, and sets:
#   CSWAP_PLUGIN   the built plugin
# and, in a sanitizer build, preloads the sanitizer runtimes
# (sanitizer-env.sh).
# shellcheck shell=bash

skip () {
  echo "1..0 # SKIP $*"
  exit 0
}

command -v nbdkit >/dev/null || skip "nbdkit is not installed"
/usr/bin/python3 -c 'import nbd' 2>/dev/null ||
  skip "libnbd's Python bindings (python3-libnbd) are not installed"
: "${CSWAP_BUILD_ROOT:?run through meson test}"
CSWAP_PLUGIN=$CSWAP_BUILD_ROOT/daemon/nbdkit-cswap-plugin.so
export CSWAP_PLUGIN

source "$(dirname "${BASH_SOURCE[0]}")/sanitizer-env.sh"
