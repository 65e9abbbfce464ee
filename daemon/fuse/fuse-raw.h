/* cswap: FUSE requests as raw kernel messages, for the transports that
 * bypass libfuse's loop (the io_uring queues and their read/write
 * fallback on /dev/fuse).
 *
 * A transport hands raw_dispatch() a request split the way the io_uring
 * interface splits it — the fuse_in_header, the opcode's fixed argument
 * struct, and the rest (names, write data) — and gets back the
 * fuse_out_header and the reply's arguments in a payload buffer of its
 * own.  The device's rules are device.c's; this file only decodes and
 * encodes (fuse-raw-dispatch.c).  Stateless: any number of threads may
 * dispatch at once.
 */
#ifndef CSWAP_FUSE_RAW_H
#define CSWAP_FUSE_RAW_H

#include <linux/fuse.h>
#include <stdbool.h>
#include <stddef.h>

#include "device.h"

/* The largest reply payload (a read of max_pages) and so the least a
 * transport's payload buffer holds.
 */
#define RAW_PAYLOAD_BYTES BLOCKDEV_MAX_IO_BYTES

struct raw_request {
  const struct fuse_in_header *in;
  const void *op_args;          /* raw_op_args_size (opcode) bytes */
  const void *payload;          /* everything after the op_args */
  size_t payload_size;
};

/* The reply's payload may be the very buffer the request's payload is in
 * (the io_uring entries have one buffer for both): raw_dispatch() reads
 * all of a request before it writes its reply.
 */
struct raw_reply {
  struct fuse_out_header out;   /* error and unique; len is left to the transport */
  void *payload;
  size_t payload_capacity;      /* at least RAW_PAYLOAD_BYTES */
  size_t payload_size;
  bool none;                    /* FORGET, INTERRUPT: nothing to send */
};

/* The size of OPCODE's fixed argument struct: what the io_uring interface
 * puts in the entry header's op_in, and what a /dev/fuse read has between
 * the fuse_in_header and the payload.  0 for opcodes without one.
 */
extern size_t raw_op_args_size (uint32_t opcode);

extern void raw_dispatch (const struct device *device,
                          const struct raw_request *request,
                          struct raw_reply *reply);

#endif /* CSWAP_FUSE_RAW_H */
