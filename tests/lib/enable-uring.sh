# cswap: sourced by tests that switch FUSE over io_uring on or off
# (/sys/module/fuse/parameters/enable_uring), machine-wide.
# shellcheck shell=bash
#
# enable_uring_save (and enable_uring_set, which calls it) takes a lock,
# held until the script exits, so that two such tests never flip the
# switch under each other, and remembers the value it found; the test's
# EXIT trap must call enable_uring_restore.

ENABLE_URING_PARAM=/sys/module/fuse/parameters/enable_uring
: "${ENABLE_URING_LOCK:=/run/lock/cswap-enable-uring.lock}"
enable_uring_saved=

# enable_uring_save: takes the lock and remembers the value, for a test
# that lets something else (cswap up) switch it.  Returns 1 if it cannot
# (not root, a kernel without the parameter, the lock held elsewhere for
# 10 minutes).
enable_uring_save ()
{
  [[ -w $ENABLE_URING_PARAM ]] || return 1
  [[ -z $enable_uring_saved ]] || return 0
  exec {ENABLE_URING_LOCK_FD}>>"$ENABLE_URING_LOCK" || return 1
  flock -w 600 "$ENABLE_URING_LOCK_FD" || return 1
  enable_uring_saved=$(cat "$ENABLE_URING_PARAM")
  [[ -n $enable_uring_saved ]]
}

# enable_uring_set Y|N: saves, then switches; 1 if it cannot.
enable_uring_set ()
{
  enable_uring_save || return 1
  echo "$1" 2>/dev/null >"$ENABLE_URING_PARAM" \
    && [[ $(cat "$ENABLE_URING_PARAM") == "$1" ]]
}

# Puts back the value found by enable_uring_save (or _set), if any.
enable_uring_restore ()
{
  [[ -z $enable_uring_saved ]] || echo "$enable_uring_saved" >"$ENABLE_URING_PARAM"
}
