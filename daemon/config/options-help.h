/* cswap: the help text of the device options (options.h), as a macro:
 * cswap-fuse's --help and its fuse_opt templates read it as options_help,
 * and the nbdkit plugin's config_help joins it to its own keys' at
 * compile time.
 */
#ifndef CSWAP_OPTIONS_HELP_H
#define CSWAP_OPTIONS_HELP_H

#define CSWAP_OPTIONS_HELP \
  "size=SIZE|N%|EXPR         Device size: 4G, 50% of RAM, or an expression\n" \
  "                          of ram in MiB (default min(ram / 2, 4096)).\n" \
  "codec=lz4|zstd            Codec for new pages (default zstd).\n" \
  "level=N                   zstd level, -7..19 (default 1).\n" \
  "cold-codec=none|zstd      Compress pages again with zstd once they have\n" \
  "                          stayed untouched (default none).\n" \
  "cold-after=SECONDS        Pass interval of that: a page is recompressed\n" \
  "                          1 to 2 passes after its last use (default 60).\n" \
  "pool-limit=SIZE|N%|EXPR   Most memory for compressed pages (default: none).\n" \
  "huge-threshold=BYTES      Store pages raw from this compressed size up.\n" \
  "max-zspage-pages=N        Longest zspage chain, 1..16 (default 8).\n" \
  "backing=PATH              Backing file or block device for cold pages.\n" \
  "backing-size=SIZE         Its size (default: the device's or file's).\n" \
  "backing-prealloc=yes|no   no: a thin file; the filesystem may fill up,\n" \
  "                          writeback then fails with ENOSPC and pages\n" \
  "                          stay in memory (default yes: fallocate).\n" \
  "backing-encrypt=yes|no    Seal pages on the backing file under a key\n" \
  "                          kept in locked memory only (default yes).\n" \
  "accept-threshold=PERCENT  Writeback stops below this % of pool-limit (90).\n" \
  "writeback-batch=N         Pages per writeback I/O batch, 1..256 (64).\n" \
  "idle-writeback=SECONDS    Write back pages idle this long (default 0: off).\n" \
  "writeback-limit=SIZE      Most bytes written to the backing file a day,\n" \
  "                          0 or 8K..128T (default 0: no limit).\n" \
  "writeback-burst=SIZE      Most of them at once (default: a day's limit).\n" \
  "read-writeback=yes|no     Write back pages the kernel has read (their\n" \
  "                          copy is kept only for a refault) (default no).\n" \
  "reserve=SIZE|N%|EXPR      Most warm memory kept for new pool pages\n" \
  "                          (default min(ram / 64, 8): 8M from 512 MiB).\n" \
  "compact-threshold=PERCENT Compact when this % of the pool is freeable (10).\n" \
  "compact=auto|off          Compact the pool by itself (default auto).\n" \
  "lock-memory=yes|no        Lock the daemon's memory (default yes).\n" \
  "core-dump=yes|no          Let the daemon dump core, for debugging (default\n" \
  "                          no: a dump would hold the swapped pages).\n" \
  "transport=auto|uring|classic\n" \
  "                          cswap-fuse: FUSE over io_uring or libfuse's\n" \
  "                          loop (default auto: io_uring if the kernel\n" \
  "                          allows it); the nbdkit plugin ignores it.\n" \
  "ctl-uid=UID               A user besides root allowed on the socket.\n" \
  "ctl=PATH|none             Control socket (default /run/cswap/NAME.sock)."

#endif /* CSWAP_OPTIONS_HELP_H */
