# cswap: sourced by tests that look at a daemon's anonymous mappings in
# /proc/PID/smaps: which are left out of core dumps (VmFlags dd) and
# which are locked (Locked:, VmFlags lo).
# shellcheck shell=bash

# smaps_anonymous PID: one line per anonymous mapping of PID (no file, no
# [heap] or [stack]): "SIZE_KB RSS_KB LOCKED_KB VMFLAG…".
smaps_anonymous () {
  awk '
    /^[0-9a-f]+-[0-9a-f]+ / { anonymous = NF == 5; next }
    $1 == "Size:" { size = $2 }
    $1 == "Rss:" { rss = $2 }
    $1 == "Locked:" { locked = $2 }
    $1 == "VmFlags:" && anonymous { $1 = ""; print size, rss, locked $0 }
  ' "/proc/$1/smaps"
}

# smaps_undumped_rss_kb PID: the resident kB of PID's anonymous mappings
# that a core dump leaves out (MADV_DONTDUMP).
smaps_undumped_rss_kb () {
  smaps_anonymous "$1" | awk '/ dd( |$)/ { kb += $2 } END { print kb + 0 }'
}

# smaps_unlocked_private PID: one line per mapping of PID that holds
# anonymous pages, resident or in swap, or could (private and writable),
# and is not locked (VmFlags without lo): "ANONYMOUS_KB SWAP_KB PERMS
# PATH".  Such a page can only go to swap, which for a cswap daemon may
# be the device it serves itself.  Not a droppable mapping (dp, Linux
# 6.11): glibc 2.41's getrandom state (Debian 13), which mlock skips and
# reclaim frees instead of swapping (seen in the trixie chroot on 6.18).
smaps_unlocked_private () {
  awk '
    /^[0-9a-f]+-[0-9a-f]+ / { perms = $2; path = NF >= 6 ? $6 : "[anonymous]"; next }
    $1 == "Anonymous:" { anon = $2 }
    $1 == "Swap:" { swap = $2 }
    $1 == "VmFlags:" && (anon > 0 || swap > 0 || perms ~ /w.p/) && !/ lo( |$)/ && !/ dp( |$)/ {
      print anon, swap, perms, path
    }
  ' "/proc/$1/smaps"
}

# smaps_text_locking PID LIBRARY: how PID's executable mapping of
# LIBRARY (a file name such as libcrypto.so) is locked: "whole" (mlock:
# every page resident and locked, VmFlags lo without lf), "on-fault"
# (mlockall's MCL_ONFAULT: lf), "not-resident" (lo, but pages missing),
# "unlocked" (neither), or "absent" (not mapped).
smaps_text_locking () {
  awk -v lib="/$2" '
    /^[0-9a-f]+-[0-9a-f]+ / { text = $2 ~ /x/ && index($6, lib) > 0; next }
    text && $1 == "Size:" { size = $2 }
    text && $1 == "Rss:" { rss = $2 }
    text && $1 == "VmFlags:" {
      if (/ lf( |$)/) how = "on-fault"
      else if (/ lo( |$)/) how = rss == size ? "whole" : "not-resident"
      else how = "unlocked"
      exit
    }
    END { print how ? how : "absent" }
  ' "/proc/$1/smaps"
}
