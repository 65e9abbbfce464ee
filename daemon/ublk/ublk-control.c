/* cswap: the ublk driver's control commands (ublk-control.h). */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ublk-control.h"

struct ublk_control {
  int fd;
  struct io_uring ring;
  uint64_t features;
};

/* The command number OP as the driver takes it: ioctl-encoded where it
 * has UBLK_F_CMD_IOCTL_ENCODE (a kernel may be built without the legacy
 * numbers), the plain number otherwise.
 */
static uint32_t
encode (const struct ublk_control *control, unsigned op)
{
  if (!(control->features & UBLK_F_CMD_IOCTL_ENCODE))
    return op;
  /* GET_DEV_INFO and GET_FEATURES only read, as the driver declares them. */
  if (op == UBLK_CMD_GET_FEATURES || op == UBLK_CMD_GET_DEV_INFO
      || op == UBLK_CMD_GET_PARAMS)
    return UBLK_IOCTL_CTRL_R (op);
  return UBLK_IOCTL_CTRL (op);
}

/* Sends CMD as command CMD_OP and waits for its result. */
static int
send_command (struct ublk_control *control, uint32_t cmd_op,
              const struct ublk_ctrl_cmd *cmd)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (&control->ring);
  struct io_uring_cqe *cqe;
  int r;

  if (sqe == NULL)
    return -EBUSY;
  memset (sqe, 0, 2 * sizeof *sqe);     /* SQE128: the command area too */
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = control->fd;
  sqe->cmd_op = cmd_op;
  memcpy (sqe->cmd, cmd, sizeof *cmd);
  r = io_uring_submit_and_wait (&control->ring, 1);
  if (r < 0)
    return r;
  r = io_uring_wait_cqe (&control->ring, &cqe);
  if (r < 0)
    return r;
  r = cqe->res;
  io_uring_cqe_seen (&control->ring, cqe);
  return r;
}

static int
device_command (struct ublk_control *control, unsigned op, uint32_t dev_id,
                void *buf, uint16_t len, uint64_t data)
{
  struct ublk_ctrl_cmd cmd = {
    .dev_id = dev_id,
    .queue_id = (uint16_t) -1,
    .addr = (uintptr_t) buf,
    .len = len,
    .data = { data },
  };

  return send_command (control, encode (control, op), &cmd);
}

struct ublk_control *
ublk_control_open (const char **why)
{
  struct ublk_control *control = calloc (1, sizeof *control);
  uint64_t features = 0;
  int r;

  if (control == NULL) {
    *why = "calloc";
    return NULL;
  }
  control->fd = open (UBLK_CONTROL_PATH, O_RDWR | O_CLOEXEC);
  if (control->fd == -1) {
    *why = "open " UBLK_CONTROL_PATH;
    free (control);
    return NULL;
  }
  r = io_uring_queue_init (4, &control->ring, IORING_SETUP_SQE128);
  if (r < 0) {
    close (control->fd);
    free (control);
    errno = -r;
    *why = "io_uring_queue_init (SQE128)";
    return NULL;
  }
  /* GET_FEATURES exists only ioctl-encoded; a driver without it (before
   * 6.5) answers an error, and has none of the features asked about.
   */
  control->features = UBLK_F_CMD_IOCTL_ENCODE;
  if (device_command (control, UBLK_CMD_GET_FEATURES, (uint32_t) -1,
                      &features, sizeof features, 0) == 0)
    control->features = features;
  else
    control->features = 0;
  return control;
}

void
ublk_control_close (struct ublk_control *control)
{
  if (control == NULL)
    return;
  io_uring_queue_exit (&control->ring);
  close (control->fd);
  free (control);
}

uint64_t
ublk_control_features (const struct ublk_control *control)
{
  return control->features;
}

int
ublk_control_add (struct ublk_control *control, struct ublk_dev_info *info)
{
  return device_command (control, UBLK_CMD_ADD_DEV, info->dev_id, info,
                         sizeof *info, 0);
}

int
ublk_control_set_params (struct ublk_control *control, uint32_t dev_id,
                         const struct ublk_params *params)
{
  /* The driver may write len back; the caller's copy stays as given. */
  struct ublk_params copy = *params;

  return device_command (control, UBLK_CMD_SET_PARAMS, dev_id, &copy,
                         sizeof copy, 0);
}

int
ublk_control_start (struct ublk_control *control, uint32_t dev_id,
                    pid_t server_pid)
{
  return device_command (control, UBLK_CMD_START_DEV, dev_id, NULL, 0,
                         (uint64_t) server_pid);
}

int
ublk_control_stop (struct ublk_control *control, uint32_t dev_id)
{
  return device_command (control, UBLK_CMD_STOP_DEV, dev_id, NULL, 0, 0);
}

int
ublk_control_delete (struct ublk_control *control, uint32_t dev_id)
{
  return device_command (control, UBLK_CMD_DEL_DEV, dev_id, NULL, 0, 0);
}

int
ublk_control_get_info (struct ublk_control *control, uint32_t dev_id,
                       struct ublk_dev_info *info)
{
  memset (info, 0, sizeof *info);
  return device_command (control, UBLK_CMD_GET_DEV_INFO, dev_id, info,
                         sizeof *info, 0);
}

int
ublk_control_get_params (struct ublk_control *control, uint32_t dev_id,
                         struct ublk_params *params)
{
  memset (params, 0, sizeof *params);
  params->len = sizeof *params;
  return device_command (control, UBLK_CMD_GET_PARAMS, dev_id, params,
                         sizeof *params, 0);
}

int
ublk_control_start_recovery (struct ublk_control *control, uint32_t dev_id)
{
  return device_command (control, UBLK_CMD_START_USER_RECOVERY, dev_id, NULL,
                         0, 0);
}

int
ublk_control_end_recovery (struct ublk_control *control, uint32_t dev_id,
                           pid_t server_pid)
{
  return device_command (control, UBLK_CMD_END_USER_RECOVERY, dev_id, NULL,
                         0, (uint64_t) server_pid);
}
