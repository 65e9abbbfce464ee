/* cswap: the ladder's follower (see ladder-follow.h).
 *
 * This file: the object, the `ladder` command and its numbers, resume and
 * shut; the follower thread is ladder-thread.c, a step's checks
 * ladder-steps.c (ladder-internal.h).
 *
 * Lock order: common/lock-order.h (ladder->lock is a leaf: nothing of
 * the engine is taken under it, and the follower, which the control
 * thread may join while holding it, takes no lock of the ladder).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cleanup.h"
#include "config-file.h"
#include "daemon-log.h"
#include "json.h"
#include "ladder-internal.h"
#include "monotonic.h"
#include "page.h"
#include "parse.h"

/* How long ladder_shut waits for a follower in the middle of a swapon. */
#define SHUT_WAIT_S 5

/* The `ladder` command. */

/* ladder add DEVICE OFFSET LENGTH PRIORITY */
static int
add_step (struct ladder *l, char *const *argv, struct json *reply,
          char *error, size_t size)
{
  uint64_t offset, length;
  int64_t priority;
  const char *why;

  if (l->follower_running)
    return refuse (error, size, "already following (ladder stop first)");
  if (parse_uint64 (argv[1], 0, UINT64_MAX, &offset, &why) == -1
      || parse_uint64 (argv[2], 2 * CSWAP_PAGE_SIZE, UINT64_MAX, &length,
                       &why) == -1
      || parse_int64 (argv[3], -1, 32767, &priority, &why) == -1)
    return refuse (error, size, "ladder add: %s", why);
  if (ladder_add_checked_step (l, argv[0], offset, length, priority, error,
                               size) == -1)
    return -1;
  json_uint (reply, "step_count", l->count);
  return 0;
}

/* What was handed over, as a daemon that takes over from this one must
 * follow it again (ladder-record.h).
 */
static void
record_hand_over (struct ladder *l)
{
  struct ladder_hand_over h = {
    .count = l->count,
    .headroom_bytes = l->headroom_bytes,
    .floor_bytes = l->floor_bytes,
  };

  if (l->record == NULL)
    return;
  for (unsigned i = 0; i < l->count; i++) {
    memcpy (h.steps[i].device, l->steps[i].device, sizeof h.steps[i].device);
    h.steps[i].offset_bytes = l->steps[i].offset_bytes;
    h.steps[i].length_bytes = l->steps[i].length_bytes;
    h.steps[i].priority = l->steps[i].priority;
  }
  ladder_record_save (l->record, &h);
}

/* Follows the steps at HEADROOM_BYTES and FLOOR_BYTES: 0, or -1 with the
 * reason in ERROR.
 */
static int
follow_steps (struct ladder *l, uint64_t headroom_bytes, uint64_t floor_bytes,
              char *error, size_t size)
{
  int err;

  if (l->follower_running)
    return refuse (error, size, "already following");
  if (l->count == 0)
    return refuse (error, size, "no steps (ladder add first)");
  if (headroom_bytes < CONFIG_MIN_LADDER_HEADROOM
      || headroom_bytes > CONFIG_MAX_LADDER_HEADROOM)
    return refuse (error, size, "ladder follow: the headroom must be 4M "
                   "to 1T");
  l->headroom_bytes = headroom_bytes;
  l->floor_bytes = floor_bytes;
  err = ladder_start_follower (l);
  if (err)
    return refuse (error, size, "starting the follower: %s",
                   strerrordesc_np (err));
  record_hand_over (l);
  return 0;
}

/* ladder follow HEADROOM [FLOOR] */
static int
start_following (struct ladder *l, const char *headroom, const char *floor,
                 struct json *reply, char *error, size_t size)
{
  uint64_t bytes, floor_bytes = 0;
  const char *why;

  if (parse_size (headroom, &bytes, &why) == -1)
    return refuse (error, size, "ladder follow: %s", why);
  if (floor != NULL && parse_size (floor, &floor_bytes, &why) == -1)
    return refuse (error, size, "ladder follow: the floor: %s", why);
  if (follow_steps (l, bytes, floor_bytes, error, size) == -1)
    return -1;
  json_bool (reply, "following", true);
  return 0;
}

static void
show (struct ladder *l, struct json *reply)
{
  struct ladder_step_view views[LADDER_MAX_STEPS];
  bool known = ladder_read_views (l, views, monotonic_ns ()) == 0;
  bool following = l->follower_running && !atomic_load (&l->stood_aside);

  json_bool (reply, "following", following);
  /* The follower ended: a step was swapped off by another process. */
  json_bool (reply, "stood_aside", atomic_load (&l->stood_aside));
  json_uint (reply, "headroom_bytes", following ? l->headroom_bytes : 0);
  json_uint (reply, "floor_bytes", following ? l->floor_bytes : 0);
  json_uint (reply, "free_bytes",
             known ? ladder_free_bytes (views, l->count) : 0);
  json_array_begin (reply, "steps");
  for (unsigned i = 0; i < l->count; i++) {
    json_object_begin (reply, NULL);
    json_string (reply, "device", l->steps[i].device);
    json_uint (reply, "offset_bytes", l->steps[i].offset_bytes);
    json_uint (reply, "length_bytes", l->steps[i].length_bytes);
    json_int (reply, "priority", l->steps[i].priority);
    json_bool (reply, "online", known && views[i].online);
    json_uint (reply, "used_bytes", known ? views[i].used_bytes : 0);
    json_bool (reply, "resting", views[i].resting);
    json_object_end (reply);
  }
  json_array_end (reply);
}

static int
run_ladder (void *arg, unsigned argc, char *const *argv, struct json *reply,
            char *error, size_t size)
{
  struct ladder *l = arg;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);

  if (l->shut)
    return refuse (error, size, "the daemon is stopping");
  if (argc == 0) {
    show (l, reply);
    return 0;
  }
  if (strcmp (argv[0], "add") == 0 && argc == 5)
    return add_step (l, argv + 1, reply, error, size);
  if (strcmp (argv[0], "follow") == 0 && (argc == 2 || argc == 3))
    return start_following (l, argv[1], argc == 3 ? argv[2] : NULL, reply,
                            error, size);
  if (strcmp (argv[0], "stop") == 0 && argc == 1) {
    ladder_stop_follower (l, 0);
    ladder_forget_steps (l);
    if (l->record)
      ladder_record_clear (l->record);
    json_bool (reply, "following", false);
    return 0;
  }
  return refuse (error, size, "usage: ladder [add DEVICE OFFSET LENGTH "
                 "PRIORITY | follow HEADROOM [FLOOR] | stop]");
}

/* The numbers. */

static unsigned
online_count (const struct ladder_step_view *views, unsigned count)
{
  unsigned online = 0;

  for (unsigned i = 0; i < count; i++)
    online += views[i].online;
  return online;
}

static const struct control_extension_number numbers[] = {
  { "ladder_steps_online", false,
    "Ladder steps that are swap, while the daemon follows the swap in use "
    "(ladder-online = follow); 0 otherwise." },
  { "ladder_swapons", true, "Ladder steps the daemon swapped on." },
  { "ladder_swapoffs", true, "Ladder steps the daemon swapped off." },
  { "ladder_swap_errors", true,
    "Ladder swapons and swapoffs that failed (the step then rests 10 s)." },
};
_Static_assert (sizeof numbers / sizeof numbers[0]
                <= CONTROL_EXTENSION_MAX_NUMBERS, "too many numbers");

static void
read_numbers (void *arg, uint64_t *values)
{
  struct ladder *l = arg;
  struct ladder_step_view views[LADDER_MAX_STEPS];
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);

  values[0] = l->follower_running && !atomic_load (&l->stood_aside)
    && ladder_read_views (l, views, 0) == 0
    ? online_count (views, l->count) : 0;
  values[1] = atomic_load (&l->swapons);
  values[2] = atomic_load (&l->swapoffs);
  values[3] = atomic_load (&l->swap_errors);
}

const struct control_extension *
ladder_control_extension (struct ladder *l)
{
  return &l->extension;
}

struct ladder *
ladder_create (const char *swap_file, struct store *store)
{
  struct ladder *l;
  size_t note_bytes;

  if (swap_file != NULL && strlen (swap_file) >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  l = calloc (1, sizeof *l);
  if (l == NULL)
    return NULL;
  l->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (l->wake_fd == -1) {
    free (l);
    return NULL;
  }
  if (swap_file != NULL)
    strcpy (l->swap_file, swap_file);
  l->store = store;
  /* Only a store that outlives the process has a note. */
  l->record = store_persistent_note (store, &note_bytes);
  if (l->record && note_bytes < ladder_record_bytes ())
    l->record = NULL;
  pthread_mutex_init (&l->lock, NULL);
  l->extension = (struct control_extension) {
    .command = "ladder",
    .args = "[add DEV OFFSET LENGTH PRIO | follow HEADROOM [FLOOR] | stop]",
    .help = "the device ladder's steps; follow the swap in use "
      "(ladder-online = follow)",
    .min_args = 0, .max_args = 5, .run = run_ladder,
    .read_only_max_args = 0,    /* `ladder` lists; add, follow, stop change */
    .numbers = numbers,
    .number_count = sizeof numbers / sizeof numbers[0],
    .read_numbers = read_numbers, .arg = l,
  };
  return l;
}

int
ladder_resume (struct ladder *l, char *error, size_t size)
{
  struct ladder_hand_over h;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);

  if (l->record == NULL || !ladder_record_load (l->record, &h))
    return 0;
  if (l->shut || l->follower_running || l->count)
    return refuse (error, size, "the ladder was handed over already");
  for (unsigned i = 0; i < h.count; i++)
    if (ladder_add_checked_step (l, h.steps[i].device, h.steps[i].offset_bytes,
                          h.steps[i].length_bytes, h.steps[i].priority,
                          error, size) == -1) {
      ladder_forget_steps (l);
      return -1;
    }
  if (follow_steps (l, h.headroom_bytes, h.floor_bytes, error, size) == -1) {
    ladder_forget_steps (l);
    return -1;
  }
  return (int) l->count;
}

void
ladder_shut (struct ladder *l)
{
  if (l == NULL)
    return;
  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&l->lock);
  l->shut = true;
  /* A follower in a swapon whose header read no request thread serves
   * any more (the daemon is going) would hold us for ever: it is left to
   * end with the process, and so is what it uses.
   */
  if (!ladder_stop_follower (l, SHUT_WAIT_S)) {
    daemon_log ("%s: ladder: the follower did not stop in %d s; "
                "leaving it\n", program_invocation_short_name, SHUT_WAIT_S);
    l->abandoned = true;
    return;
  }
  ladder_forget_steps (l);
}

void
ladder_destroy (struct ladder *l)
{
  if (l == NULL || l->abandoned)
    return;
  ladder_forget_steps (l);
  close (l->wake_fd);
  pthread_mutex_destroy (&l->lock);
  free (l);
}
