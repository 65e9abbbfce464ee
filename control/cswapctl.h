/* cswapctl: what the client's files share (internal to cswapctl).
 *
 *   cswapctl.c      options, the commands, the socket exchange
 *   ctl-reply.c     errors, reply members and figures from them, numbers
 *                   as text
 *   ctl-locate.c    which socket, which swap device, its /proc/swaps line
 *   ctl-table.c     aligned, raw and headless tables
 *   ctl-columns.c   the device listing (stats): its columns and --output
 *   ctl-status.c    the status paragraph
 *
 * Single-threaded: no locking anywhere in the client.
 */
#ifndef CSWAP_CSWAPCTL_H
#define CSWAP_CSWAPCTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#define PROGRAM_NAME "cswapctl"
#define EXIT_DAEMON_ERROR 1
#define EXIT_USAGE 2
#define EXIT_CONNECT 3

/* ctl-reply.c */

__attribute__ ((noreturn, format (printf, 2, 3)))
extern void die (int status, const char *fmt, ...);
/* Members of a reply; a missing one is a daemon error (exit 1). */
extern json_object *member (json_object *o, const char *key);
extern uint64_t member_uint (json_object *o, const char *key);
extern double member_double (json_object *o, const char *key);
/* Figures worked out from a `stats` reply, which the listing and status
 * both show: the peak of TOTAL (memory_used_bytes), the data on the
 * backing file (uncompressed), and backing file space held by pages
 * since freed.
 */
extern uint64_t stats_memory_peak (json_object *stats);
extern uint64_t stats_on_disk (json_object *stats);
extern uint64_t stats_stale (json_object *stats);

/* How a size reads: "1.2G" as zramctl's table, "1.2 GiB" in prose, or
 * "1288490188".
 */
enum size_style { SIZE_SHORT, SIZE_LONG, SIZE_BYTES };
#define SIZE_TEXT_MAX 32
extern void format_size (char out[SIZE_TEXT_MAX], uint64_t bytes,
                         enum size_style style);
/* "3d04h", "2h05m", "4m10s", "42s". */
extern void format_duration (char out[SIZE_TEXT_MAX], double seconds);

/* ctl-locate.c */

/* One daemon a command talks to. */
struct target {
  const char *socket_path;
  /* The swap devices the cswap helper recorded for this socket (its
   * ladder, highest priority first, separated by blanks), "" when none:
   * the daemon itself does not know which devices serve it.  DEVICE is
   * the first, the name of a row.
   */
  char devices[PATH_MAX];
  char device[PATH_MAX];
  json_object *reply;           /* the daemon's parsed reply */
};

/* The socket without --socket: the one the cswap service recorded, else
 * the nbdkit plugin's default.  Static storage.
 */
extern const char *default_socket (void);
/* Fills T->devices and T->device from the cswap helper's state file. */
extern void locate_device (struct target *t);
/* What a row or a paragraph is about: the device, else the socket. */
extern const char *target_name (const struct target *t);
/* The kernel's swap use of T->devices from /proc/swaps, added up over
 * the ladder: true with *USED_BYTES and *SIZE_BYTES set, false when no
 * device is known or none is swap now.
 */
extern bool device_swap_use (const struct target *t, uint64_t *used_bytes,
                             uint64_t *size_bytes);

/* ctl-table.c: cells are added row after row and formatted when printed,
 * so that each column takes the width of its widest cell.  Text columns
 * are left-aligned, numbers right; raw output is one space between cells,
 * no alignment, and a byte that would split a cell escaped as \xNN.
 */
struct table_column {
  const char *header;
  bool left;
};
struct table {
  const struct table_column *columns;
  size_t column_count;
  char **cells;                 /* row-major, headers not included */
  size_t cell_count, capacity;
};
struct table_style {
  bool raw, no_headings;
};
extern void table_init (struct table *t, const struct table_column *columns,
                        size_t column_count);
__attribute__ ((format (printf, 2, 3)))
extern void table_cell (struct table *t, const char *fmt, ...);
/* Prints T to stdout and frees its cells. */
extern void table_print (struct table *t, const struct table_style *style);

/* ctl-columns.c */

#define COLUMNS_MAX 64
struct column_list {
  size_t count;
  unsigned id[COLUMNS_MAX];
};
/* The default columns. */
extern void columns_default (struct column_list *list);
extern void columns_all (struct column_list *list);
/* "A,B,C" (case does not matter), or "+A,B" for the default ones and
 * these.  Dies with EXIT_USAGE and the valid names on an unknown one.
 */
extern void columns_parse (const char *text, struct column_list *list);
/* Every column and its meaning, for --output help. */
extern void columns_help (FILE *f);
/* The device listing: one row per target. */
struct listing_style {
  struct table_style table;
  bool bytes;                   /* exact byte counts */
  const struct column_list *columns;
};
extern void print_listing (const struct target *targets, size_t count,
                           const struct listing_style *style);

/* ctl-status.c: one paragraph per target, a blank line between them. */
extern void print_status (const struct target *targets, size_t count);

#endif /* CSWAP_CSWAPCTL_H */
