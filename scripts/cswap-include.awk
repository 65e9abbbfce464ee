# cswap: builds the `cswap` script from scripts/cswap.in and its parts
# (systemd/meson.build): each line "#@include NAME" becomes the file
# DIR/NAME, under a line that names it, without its shellcheck directive
# (one at the top of the whole script is enough).
#
#   awk -v dir=DIR -f cswap-include.awk CONFIGURED-CSWAP.IN >cswap
/^#@include / {
  file = dir "/" $2
  print "# ---- scripts/cswap/" $2 " ----"
  first = 1
  while ((status = getline line < file) > 0) {
    if (!(first && line ~ /^# shellcheck shell=/))
      print line
    first = 0
  }
  if (status < 0) {
    print "cswap-include.awk: cannot read " file > "/dev/stderr"
    exit 1
  }
  close (file)
  next
}
{ print }
