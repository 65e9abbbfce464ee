/* cswap: the ublk kernel interface, as far as cswap-ublk uses it.
 *
 * Debian 12's <linux/ublk_cmd.h> is 6.1's, older than the kernels that
 * have the driver enabled (Debian 13's 6.12, bookworm-backports' 6.12,
 * 7.x); the build must not depend on which one is installed, so this
 * header carries the ABI itself, written from the kernel's
 * include/uapi/linux/ublk_cmd.h (6.12) and drivers/block/ublk_drv.c.
 * The sizes are part of the ABI and checked below.
 *
 * How a ublk server works, in short:
 *  - Control: commands go to /dev/ublk-control as IORING_OP_URING_CMD on
 *    a ring with 128-byte SQEs (the 32-byte struct ublksrv_ctrl_cmd sits
 *    in the SQE's command area).  GET_FEATURES says what the running
 *    driver has; ADD_DEV makes /dev/ublkcN (the server's side) with the
 *    queues and depth asked for; SET_PARAMS gives the size, block sizes,
 *    discard limits; START_DEV makes /dev/ublkbN once every queue has
 *    fetched every tag; STOP_DEV removes the disk, DEL_DEV the device.
 *  - I/O: per queue, the server mmaps the queue's array of struct
 *    ublksrv_io_desc from /dev/ublkcN and, for each tag, submits a
 *    URING_CMD FETCH_REQ.  A request completes the tag's command (res
 *    UBLK_IO_RES_OK); its descriptor says the op, the start sector and
 *    the length.  With UBLK_F_USER_COPY (6.5 and later) the server moves
 *    the data itself: pread() of /dev/ublkcN at ublk_user_copy_offset()
 *    reads a write's data, pwrite() there fills a read's.  (Without it
 *    the driver copies to and from a buffer per tag, pinning the
 *    server's pages as it does: a page not yet faulted in is then an
 *    allocation in the swap-out path.)  The server answers with
 *    COMMIT_AND_FETCH_REQ (the result: bytes done or -errno) and waits
 *    for the tag's next request, in one io_uring_enter.
 *  - Commands of one queue must all come from one task (the driver
 *    checks), and a queue's requests reach it as task work run inside
 *    that task's io_uring_enter.
 *  - On STOP_DEV, or when the server's ring goes away, outstanding
 *    commands complete with UBLK_IO_RES_ABORT.
 *  - User recovery (UBLK_F_USER_RECOVERY, 5.19 and later): a device
 *    added with it outlives its server.  When the server dies the driver
 *    keeps the disk and moves the device to QUIESCED, where requests wait
 *    for a new server (with _REISSUE, those the dead one held are queued
 *    again too), or, with UBLK_F_USER_RECOVERY_FAIL_IO (6.13 and later),
 *    to FAIL_IO, where they fail at once.  A new server sends
 *    START_USER_RECOVERY (EBUSY until the dead one's char device is
 *    released), opens /dev/ublkcN, fetches every tag of every queue and
 *    sends END_USER_RECOVERY with its PID: the disk is LIVE again and
 *    the waiting requests reach it.  The parameters are the device's
 *    still (GET_PARAMS reads them).
 */
#ifndef CSWAP_UBLK_ABI_H
#define CSWAP_UBLK_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

#define UBLK_CONTROL_PATH "/dev/ublk-control"
#define UBLK_CHAR_PATH_FORMAT "/dev/ublkc%u"
#define UBLK_BLOCK_PATH_FORMAT "/dev/ublkb%u"

/* The control command, in the SQE's command area. */
struct ublk_ctrl_cmd {
  uint32_t dev_id;              /* -1 in ADD_DEV: the driver picks */
  uint16_t queue_id;            /* -1: not for one queue */
  uint16_t len;                 /* of the buffer at addr */
  uint64_t addr;
  uint64_t data[1];             /* inline: START_DEV's server PID */
  uint16_t dev_path_len;
  uint16_t pad;
  uint32_t reserved;
};

/* ADD_DEV's argument and GET_DEV_INFO's answer. */
struct ublk_dev_info {
  uint16_t nr_hw_queues;
  uint16_t queue_depth;
  uint16_t state;               /* UBLK_S_DEV_* */
  uint16_t pad0;
  uint32_t max_io_buf_bytes;
  uint32_t dev_id;
  int32_t ublksrv_pid;
  uint32_t pad1;
  uint64_t flags;               /* UBLK_F_* */
  uint64_t ublksrv_flags;       /* the server's own; the driver keeps it */
  uint32_t owner_uid;
  uint32_t owner_gid;
  uint64_t reserved1;
  uint64_t reserved2;
};

/* What the server reads for each request. */
struct ublk_io_desc {
  uint32_t op_flags;            /* op: bits 0-7, flags above */
  uint32_t nr_sectors;
  uint64_t start_sector;
  uint64_t addr;
};

/* FETCH_REQ's and COMMIT_AND_FETCH_REQ's argument. */
struct ublk_io_cmd {
  uint16_t q_id;
  uint16_t tag;
  int32_t result;               /* COMMIT: bytes done or -errno */
  uint64_t addr;                /* the tag's buffer */
};

struct ublk_param_basic {
  uint32_t attrs;
  uint8_t logical_bs_shift;
  uint8_t physical_bs_shift;
  uint8_t io_opt_shift;
  uint8_t io_min_shift;
  uint32_t max_sectors;
  uint32_t chunk_sectors;
  uint64_t dev_sectors;
  uint64_t virt_boundary_mask;
};

struct ublk_param_discard {
  uint32_t discard_alignment;
  uint32_t discard_granularity;
  uint32_t max_discard_sectors;
  uint32_t max_write_zeroes_sectors;
  uint16_t max_discard_segments;
  uint16_t reserved0;
};

/* The parameters SET_PARAMS takes: only the types named are read, and
 * len says how much of the struct the server knows (later kernels add
 * types at the end).
 */
struct ublk_params {
  uint32_t len;
  uint32_t types;               /* UBLK_PARAM_TYPE_* */
  struct ublk_param_basic basic;
  struct ublk_param_discard discard;
};

_Static_assert (sizeof (struct ublk_ctrl_cmd) == 32, "ublk ABI");
_Static_assert (sizeof (struct ublk_dev_info) == 64, "ublk ABI");
_Static_assert (sizeof (struct ublk_io_desc) == 24, "ublk ABI");
_Static_assert (sizeof (struct ublk_io_cmd) == 16, "ublk ABI");
_Static_assert (sizeof (struct ublk_param_basic) == 32, "ublk ABI");
_Static_assert (sizeof (struct ublk_param_discard) == 20, "ublk ABI");
_Static_assert (offsetof (struct ublk_params, discard) == 40, "ublk ABI");

/* Control commands: the legacy numbers, and the ioctl-encoded ones that
 * kernels with UBLK_F_CMD_IOCTL_ENCODE take (and that those built
 * without CONFIG_BLKDEV_UBLK_LEGACY_OPCODES require).
 */
#define UBLK_CMD_GET_DEV_INFO 0x02
#define UBLK_CMD_ADD_DEV 0x04
#define UBLK_CMD_DEL_DEV 0x05
#define UBLK_CMD_START_DEV 0x06
#define UBLK_CMD_STOP_DEV 0x07
#define UBLK_CMD_SET_PARAMS 0x08
#define UBLK_CMD_GET_PARAMS 0x09
#define UBLK_CMD_START_USER_RECOVERY 0x10
#define UBLK_CMD_END_USER_RECOVERY 0x11
#define UBLK_CMD_GET_FEATURES 0x13
#define UBLK_IOCTL_CTRL(nr) _IOWR ('u', (nr), struct ublk_ctrl_cmd)
#define UBLK_IOCTL_CTRL_R(nr) _IOR ('u', (nr), struct ublk_ctrl_cmd)

/* I/O commands, likewise. */
#define UBLK_IO_FETCH_REQ 0x20
#define UBLK_IO_COMMIT_AND_FETCH_REQ 0x21
#define UBLK_IOCTL_IO(nr) _IOWR ('u', (nr), struct ublk_io_cmd)

/* A completed I/O command's res. */
#define UBLK_IO_RES_OK 0
#define UBLK_IO_RES_NEED_GET_DATA 1
/* UBLK_IO_RES_ABORT is -ENODEV. */

/* Where the descriptors of queue Q are in /dev/ublkcN: each queue's
 * array starts on a page boundary.
 */
#define UBLK_DESCS_OFFSET 0

/* With UBLK_F_USER_COPY: where a request's data is in /dev/ublkcN. */
#define UBLK_USER_COPY_BASE 0x80000000ULL
#define UBLK_USER_COPY_TAG_SHIFT 25
#define UBLK_USER_COPY_QID_SHIFT (25 + 16)

static inline uint64_t
ublk_user_copy_offset (uint16_t qid, uint16_t tag)
{
  return UBLK_USER_COPY_BASE + ((uint64_t) qid << UBLK_USER_COPY_QID_SHIFT)
         + ((uint64_t) tag << UBLK_USER_COPY_TAG_SHIFT);
}

/* Device flags (ADD_DEV) and features (GET_FEATURES). */
#define UBLK_F_URING_CMD_COMP_IN_TASK (1ULL << 1)
#define UBLK_F_USER_RECOVERY (1ULL << 3)
#define UBLK_F_USER_RECOVERY_REISSUE (1ULL << 4)
#define UBLK_F_UNPRIVILEGED_DEV (1ULL << 5)
#define UBLK_F_CMD_IOCTL_ENCODE (1ULL << 6)
#define UBLK_F_USER_COPY (1ULL << 7)
#define UBLK_F_USER_RECOVERY_FAIL_IO (1ULL << 9)        /* 6.13 */

#define UBLK_S_DEV_DEAD 0
#define UBLK_S_DEV_LIVE 1
#define UBLK_S_DEV_QUIESCED 2
#define UBLK_S_DEV_FAIL_IO 3                            /* 6.13 */

/* Request ops and flags (struct ublk_io_desc). */
#define UBLK_IO_OP_READ 0
#define UBLK_IO_OP_WRITE 1
#define UBLK_IO_OP_FLUSH 2
#define UBLK_IO_OP_DISCARD 3
#define UBLK_IO_OP_WRITE_SAME 4
#define UBLK_IO_OP_WRITE_ZEROES 5
#define UBLK_IO_F_NOUNMAP (1U << 15)
#define UBLK_IO_F_SWAP (1U << 16)

#define UBLK_PARAM_TYPE_BASIC (1 << 0)
#define UBLK_PARAM_TYPE_DISCARD (1 << 1)

#define UBLK_MAX_QUEUE_DEPTH 4096

#endif /* CSWAP_UBLK_ABI_H */
