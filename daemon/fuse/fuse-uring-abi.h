/* cswap: the FUSE-over-io_uring kernel interface (FUSE protocol 7.42).
 *
 * Debian 12's <linux/fuse.h> is protocol 7.38, which predates io_uring;
 * this header adds what cswap's io_uring transport needs, written from
 * the kernel's include/uapi/linux/fuse.h, fs/fuse/dev_uring.c and
 * Documentation/filesystems/fuse/fuse-io-uring.rst.  The sizes are part
 * of the kernel ABI and checked below.
 *
 * How it works, in short:
 *  - The server answers FUSE_INIT (read from /dev/fuse as ever) with
 *    FUSE_INIT_EXT and FUSE_OVER_IO_URING in flags2.  The kernel then holds
 *    new requests back until the ring is ready.
 *  - For each queue (one per possible CPU, qid = CPU number) and each of a
 *    few entries per queue, the server submits IORING_OP_URING_CMD on the
 *    /dev/fuse fd, on a ring set up with IORING_SETUP_SQE128 (the command
 *    below lives in the SQE's 80-byte cmd area), cmd_op
 *    FUSE_IO_URING_CMD_REGISTER, sqe->addr pointing at two iovecs: the
 *    entry's struct fuse_uring_req_header and its payload buffer (at least
 *    max(max_write, max_pages * page size) bytes), sqe->len = 2.
 *  - Once every queue has an entry, the ring is ready: each request goes
 *    to the queue of the CPU that made it and completes one of its entries'
 *    commands (CQE res 0).  The entry's header then holds the
 *    fuse_in_header (in_out), the opcode's fixed struct when it has one
 *    (op_in) and ring_ent_in_out (commit_id, payload_sz); the payload
 *    buffer holds the rest (names, write data).
 *  - The server writes its fuse_out_header into in_out, the reply's
 *    arguments into the payload (payload_sz = their size), and submits
 *    FUSE_IO_URING_CMD_COMMIT_AND_FETCH with the commit_id: one
 *    io_uring_enter both replies and waits for the entry's next request.
 *  - INTERRUPT, FORGET and the end of the connection (ENODEV) still come
 *    through read() on /dev/fuse.  Entries end with a negative CQE res
 *    (ENOTCONN and the like) when the connection goes away.
 */
#ifndef CSWAP_FUSE_URING_ABI_H
#define CSWAP_FUSE_URING_ABI_H

#include <stdint.h>

/* fuse_init_in/out flags: flags2 carries bits 32..63. */
#define FUSE_URING_FLAG_OVER_IO_URING (1ULL << 41)

/* The protocol minor version that brought io_uring. */
#define FUSE_URING_MINOR_VERSION 42

/* FOPEN_PARALLEL_DIRECT_WRITES (7.36), missing from libfuse 3.14's API. */
#define FUSE_URING_FOPEN_PARALLEL_DIRECT_WRITES (1u << 6)

#define FUSE_URING_IN_OUT_HEADER_BYTES 128
#define FUSE_URING_OP_IN_OUT_BYTES 128

/* Written by the kernel with each request, by the server with its reply. */
struct fuse_uring_ent_in_out {
  uint64_t flags;
  uint64_t commit_id;           /* the request's unique, echoed on commit */
  uint32_t payload_sz;          /* bytes used in the payload buffer */
  uint32_t padding;
  uint64_t reserved;
};

/* iov[0] of a registration: one per entry. */
struct fuse_uring_req_header {
  /* struct fuse_in_header from the kernel, fuse_out_header back */
  char in_out[FUSE_URING_IN_OUT_HEADER_BYTES];
  /* the opcode's fixed argument struct (fuse_read_in, fuse_write_in, …) */
  char op_in[FUSE_URING_OP_IN_OUT_BYTES];
  struct fuse_uring_ent_in_out ring_ent_in_out;
};

/* sqe->cmd_op values. */
enum fuse_uring_cmd {
  FUSE_IO_URING_CMD_INVALID = 0,
  FUSE_IO_URING_CMD_REGISTER = 1,          /* give an entry, wait for work */
  FUSE_IO_URING_CMD_COMMIT_AND_FETCH = 2,  /* reply, wait for the next */
};

/* In the SQE's 80-byte command area. */
struct fuse_uring_cmd_req {
  uint64_t flags;
  uint64_t commit_id;           /* COMMIT_AND_FETCH: the request replied to */
  uint16_t qid;                 /* the queue (CPU) the entry serves */
  uint8_t padding[6];
};

#define FUSE_URING_SQE_CMD_BYTES 80

_Static_assert (sizeof (struct fuse_uring_ent_in_out) == 32,
                "fuse_uring_ent_in_out is 32 bytes in the kernel ABI");
_Static_assert (sizeof (struct fuse_uring_req_header) == 288,
                "fuse_uring_req_header is 288 bytes in the kernel ABI");
_Static_assert (sizeof (struct fuse_uring_cmd_req) == 24,
                "fuse_uring_cmd_req is 24 bytes in the kernel ABI");
_Static_assert (sizeof (struct fuse_uring_cmd_req) <= FUSE_URING_SQE_CMD_BYTES,
                "the command fits the SQE128 command area");

#endif /* CSWAP_FUSE_URING_ABI_H */
