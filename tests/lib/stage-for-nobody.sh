# cswap: sourced by tests that run programs of the build as nobody.  The
# build tree may sit where nobody cannot reach it (a clone under /root,
# which is 0700, as is a new user's home on Debian 12): there nbdkit run
# as nobody cannot open the plugin ("cannot open shared object file:
# Permission denied").  So such tests run copies staged in $tmp, which
# the sourcing test has made (mktemp -d), cleans up, and which this makes
# 0711, with the copies in a 0755 directory in it.
# shellcheck shell=bash disable=SC2154  # $tmp: the sourcing test's

nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# stage_for_nobody VAR FILE: copies FILE to $tmp/staged and sets VAR to the
# copy's path.  Skips the test if nobody can still not read the copy,
# saying where it is ($tmp under a directory nobody cannot enter: TMPDIR).
stage_for_nobody () {
  local var=$1 file=$2 copy
  copy=$tmp/staged/$(basename "$file")
  if ! { chmod 0711 "$tmp" && install -d -m 0755 "$tmp/staged" &&
         install -m 0755 "$file" "$copy"; }; then
    skip "cannot stage $file for nobody in $tmp"
  fi
  "${nobody[@]}" test -r "$copy" ||
    skip "nobody cannot read $copy, a copy of the build's $(basename "$file") (is TMPDIR under a directory nobody cannot enter?)"
  printf -v "$var" %s "$copy"
}
