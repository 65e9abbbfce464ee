/* cswap: load a page file (raw, or zstd-compressed) for tests and benchmarks. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "page.h"
#include "pagefile.h"

static int
read_whole_file (const char *path, unsigned char **data, size_t *len)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd == -1) {
    fprintf (stderr, "%s: open: %m\n", path);
    return -1;
  }
  if (fstat (fd, &st) == -1) {
    fprintf (stderr, "%s: fstat: %m\n", path);
    close (fd);
    return -1;
  }
  *len = st.st_size;
  *data = malloc (*len ? *len : 1);
  if (*data == NULL) {
    fprintf (stderr, "%s: malloc: %m\n", path);
    close (fd);
    return -1;
  }
  for (size_t done = 0; done < *len;) {
    ssize_t r = read (fd, *data + done, *len - done);
    if (r <= 0) {
      fprintf (stderr, "%s: read: %s\n", path, r == 0 ? "short file" : strerror (errno));
      free (*data);
      close (fd);
      return -1;
    }
    done += r;
  }
  close (fd);
  return 0;
}

static int
decompress_zstd (const char *path, const unsigned char *in, size_t in_len,
                 unsigned char **out, size_t *out_len)
{
  unsigned long long expect = ZSTD_getFrameContentSize (in, in_len);
  size_t cap = (expect != ZSTD_CONTENTSIZE_UNKNOWN && expect != ZSTD_CONTENTSIZE_ERROR)
    ? expect : in_len * 4;
  ZSTD_DStream *ds = ZSTD_createDStream ();
  ZSTD_inBuffer ib = { in, in_len, 0 };
  unsigned char *buf = malloc (cap ? cap : 1);

  if (ds == NULL || buf == NULL) {
    fprintf (stderr, "%s: out of memory\n", path);
    goto fail;
  }
  *out_len = 0;
  while (ib.pos < ib.size) {
    if (*out_len == cap) {
      unsigned char *bigger = realloc (buf, cap * 2);
      if (bigger == NULL) {
        fprintf (stderr, "%s: realloc: %m\n", path);
        goto fail;
      }
      buf = bigger;
      cap *= 2;
    }
    ZSTD_outBuffer ob = { buf + *out_len, cap - *out_len, 0 };
    size_t r = ZSTD_decompressStream (ds, &ob, &ib);
    if (ZSTD_isError (r)) {
      fprintf (stderr, "%s: zstd: %s\n", path, ZSTD_getErrorName (r));
      goto fail;
    }
    *out_len += ob.pos;
    if (r != 0 && ob.pos == 0 && ib.pos == ib.size) {
      fprintf (stderr, "%s: zstd: truncated frame\n", path);
      goto fail;
    }
  }
  ZSTD_freeDStream (ds);
  *out = buf;
  return 0;

 fail:
  ZSTD_freeDStream (ds);
  free (buf);
  return -1;
}

int
pagefile_load (const char *path, struct pagefile *pf)
{
  static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
  unsigned char *raw;
  size_t raw_len;

  if (read_whole_file (path, &raw, &raw_len) == -1)
    return -1;
  if (raw_len >= 4 && memcmp (raw, zstd_magic, 4) == 0) {
    unsigned char *plain;
    size_t plain_len;
    int r = decompress_zstd (path, raw, raw_len, &plain, &plain_len);
    free (raw);
    if (r == -1)
      return -1;
    raw = plain;
    raw_len = plain_len;
  }
  pf->data = raw;
  pf->pages = raw_len / CSWAP_PAGE_SIZE;
  if (pf->pages == 0) {
    fprintf (stderr, "%s: holds no whole 4 KiB page\n", path);
    free (raw);
    return -1;
  }
  return 0;
}

void
pagefile_free (struct pagefile *pf)
{
  free (pf->data);
  pf->data = NULL;
  pf->pages = 0;
}
