/* cswap: reading /etc/cswap.conf and its drop-ins (see config-file.h and
 * cswap.conf(5)).
 *
 * A line is split at its first '=', both halves trimmed of blanks; the
 * value may itself contain '=' and blanks inside it.  Device keys go to
 * options_set(), which owns their names, ranges and messages; this file
 * adds the place ("PATH:LINE: ") and owns only the service keys and the
 * file's own rules (a missing '=', a key given twice in one file).  The
 * files are read in turn into the same options, so a later file's key
 * simply overrides an earlier one's; config-dropins.c says which files,
 * config-origins.c keeps where each key came from.
 *
 * Duplicates are found with a small table of the keys one file gave so
 * far: a key is recorded only once options_set() took it, so the table
 * holds at most as many entries as there are valid keys.
 *
 * Locking: none; called once, single-threaded, before any thread starts.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config-file.h"
#include "page.h"
#include "parse.h"

#define MAX_KEY_BYTES 64

struct seen_key {
  char name[MAX_KEY_BYTES];
  unsigned line;
};

static char why_buffer[PATH_MAX + 512];

void
config_service_init (struct cswap_service *service)
{
  *service = (struct cswap_service) {
    .frontend = FRONTEND_AUTO,
    .priority = CONFIG_DEFAULT_PRIORITY,
    .ladder_step = CONFIG_DEFAULT_LADDER_STEP,
    .ladder_online = LADDER_ONLINE_AUTO,
    .ladder_headroom = CONFIG_DEFAULT_LADDER_HEADROOM,
  };
  strcpy (service->mountpoint, CONFIG_DEFAULT_MOUNTPOINT);
}

/* Trims blanks at both ends of S in place; returns the new start. */
static char *
trim (char *s)
{
  char *end = s + strlen (s);

  while (isspace ((unsigned char) *s))
    s++;
  while (end > s && isspace ((unsigned char) end[-1]))
    *--end = '\0';
  return s;
}

/* Cuts LINE at its comment: a '#' at its start or after a blank. */
static void
strip_comment (char *line)
{
  for (char *p = line; *p; p++)
    if (*p == '#' && (p == line || isspace ((unsigned char) p[-1]))) {
      *p = '\0';
      return;
    }
}

/* VALUE is one word nbd-client cannot take for an option: not empty, no
 * blank, no leading '-', at most MAX bytes.
 */
static bool
is_client_word (const char *value, size_t max)
{
  size_t len = strlen (value);

  if (len == 0 || len > max || value[0] == '-')
    return false;
  for (const char *p = value; *p; p++)
    if (isspace ((unsigned char) *p) || iscntrl ((unsigned char) *p))
      return false;
  return true;
}

/* The remote device's keys (cswap.conf(5), REMOTE): remote = HOST and
 * remote-KEY; 1 for an unknown remote-KEY, as for any unknown key.
 */
static int
remote_set (struct cswap_service *service, const char *key,
            const char *value, const char **reason)
{
  static const char *const paths[] = {
    "remote-certfile", "remote-keyfile", "remote-cacertfile",
  };
  int64_t number;

  if (strcmp (key, "remote") == 0) {
    /* A DNS name is at most 253 bytes; an IPv6 address is shorter. */
    if (!is_client_word (value, 253)) {
      *reason = "a host name or address is needed";
      return -1;
    }
    service->remote = true;
    return 0;
  }
  if (strcmp (key, "remote-port") == 0) {
    if (parse_int64 (value, 1, 65535, &number, reason) == -1)
      return -1;
  }
  else if (strcmp (key, "remote-export") == 0) {
    if (strlen (value) > CONFIG_MAX_EXPORT_NAME) {
      *reason = "longer than the NBD protocol's 4096 bytes";
      return -1;
    }
  }
  else if (strcmp (key, "remote-connections") == 0) {
    if (parse_int64 (value, 1, CONFIG_MAX_REMOTE_CONNECTIONS, &number,
                     reason) == -1)
      return -1;
  }
  else if (strcmp (key, "remote-timeout") == 0
           || strcmp (key, "remote-persist") == 0) {
    if (parse_int64 (value, 0, 24 * 3600, &number, reason) == -1)
      return -1;
  }
  else if (strcmp (key, "remote-tlshostname") == 0) {
    if (!is_client_word (value, 253)) {
      *reason = "a host name is needed";
      return -1;
    }
  }
  else {
    size_t i = 0;

    while (i < sizeof paths / sizeof paths[0] && strcmp (key, paths[i]) != 0)
      i++;
    if (i == sizeof paths / sizeof paths[0])
      return 1;
    if (value[0] != '/' || !is_client_word (value, PATH_MAX - 1)) {
      *reason = "an absolute path is needed";
      return -1;
    }
    service->remote_certfile |= i == 0;
    service->remote_keyfile |= i == 1;
  }
  snprintf (service->remote_key, sizeof service->remote_key, "%s", key);
  return 0;
}

/* Sets the service key KEY, or returns 1 if KEY is not a service key, or
 * -1 with *REASON set for a bad value.
 */
static int
service_set (struct cswap_service *service, const char *key,
             const char *value, const char **reason)
{
  int64_t number;

  if (strcmp (key, "frontend") == 0) {
    static const char *const names[] = {
      [FRONTEND_AUTO] = "auto", [FRONTEND_FUSE] = "fuse",
      [FRONTEND_NBD] = "nbd", [FRONTEND_REMOTE] = "remote",
      [FRONTEND_UBLK] = "ublk",
    };
    unsigned index;

    if (parse_choice (value, names, sizeof names / sizeof names[0], &index,
                      reason) == -1)
      return -1;
    service->frontend = index;
    return 0;
  }
  if (strcmp (key, "remote") == 0 || strncmp (key, "remote-", 7) == 0)
    return remote_set (service, key, value, reason);
  if (strcmp (key, "priority") == 0) {
    if (parse_int64 (value, -1, 32767, &number, reason) == -1)
      return -1;
    service->priority = number;
    return 0;
  }
  if (strcmp (key, "mountpoint") == 0) {
    if (value[0] != '/' || strlen (value) >= sizeof service->mountpoint) {
      *reason = "an absolute path is needed";
      return -1;
    }
    strcpy (service->mountpoint, value);
    return 0;
  }
  if (strcmp (key, "ladder-step") == 0) {
    uint64_t bytes;

    if (parse_size (value, &bytes, reason) == -1)
      return -1;
    if (bytes % CSWAP_PAGE_SIZE != 0) {
      *reason = "a whole number of 4 KiB pages is needed (0: one device)";
      return -1;
    }
    service->ladder_step = bytes;
    return 0;
  }
  if (strcmp (key, "ladder-online") == 0) {
    static const char *const names[] = {
      [LADDER_ONLINE_AUTO] = "auto", [LADDER_ONLINE_ALL] = "all",
      [LADDER_ONLINE_FOLLOW] = "follow",
    };
    unsigned index;

    if (parse_choice (value, names, sizeof names / sizeof names[0], &index,
                      reason) == -1)
      return -1;
    service->ladder_online = index;
    return 0;
  }
  /* Checked only: the cswap helper turns auto into a size and hands it to
   * the follower (`ladder follow HEADROOM FLOOR`).
   */
  if (strcmp (key, "ladder-floor") == 0) {
    uint64_t bytes;

    if (strcmp (value, "auto") == 0)
      return 0;
    if (parse_size (value, &bytes, reason) == -1) {
      *reason = "use auto or a size (0: none)";
      return -1;
    }
    return 0;
  }
  if (strcmp (key, "ladder-headroom") == 0) {
    uint64_t bytes;

    if (parse_size (value, &bytes, reason) == -1)
      return -1;
    if (bytes < CONFIG_MIN_LADDER_HEADROOM
        || bytes > CONFIG_MAX_LADDER_HEADROOM) {
      *reason = "a size from 4M to 1T is needed";
      return -1;
    }
    service->ladder_headroom = bytes;
    return 0;
  }
  /* The machine settings `cswap up` changes while cswap is up, each with
   * its two values: checked only, the cswap helper acts on them (cswap(8)
   * tune).
   */
  static const struct {
    const char *key, *change, *keep;
  } tunings[] = {
    { "halt-poll", "auto", "keep" },
    { "min-free", "auto", "keep" },
    { "page-cluster", "auto", "keep" },
    { "zswap", "off", "keep" },
  };
  for (size_t i = 0; i < sizeof tunings / sizeof tunings[0]; i++)
    if (strcmp (key, tunings[i].key) == 0) {
      bool keep;

      return parse_either (value, tunings[i].change, tunings[i].keep,
                           &keep, reason);
    }
  return 1;
}

/* Handles one line (LINENO of PATH).  Returns 0 or -1 with *WHY set. */
static int
read_line (const char *path, unsigned lineno, char *line,
           struct cswap_options *options, struct cswap_service *service,
           struct config_origins *origins,
           struct seen_key *seen, size_t *seen_count, const char **why)
{
  const char *reason = NULL, *option_why;
  char *equals, *key, *value;
  int r;

  strip_comment (line);
  key = trim (line);
  if (*key == '\0')
    return 0;
  equals = strchr (key, '=');
  if (equals == NULL) {
    snprintf (why_buffer, sizeof why_buffer,
              "%s:%u: %s: expected key = value", path, lineno, key);
    *why = why_buffer;
    return -1;
  }
  *equals = '\0';
  key = trim (key);
  value = trim (equals + 1);
  if (*key == '\0') {
    snprintf (why_buffer, sizeof why_buffer, "%s:%u: no key before '='",
              path, lineno);
    *why = why_buffer;
    return -1;
  }
  for (size_t i = 0; i < *seen_count; i++)
    if (strcmp (seen[i].name, key) == 0) {
      snprintf (why_buffer, sizeof why_buffer,
                "%s:%u: %s: given twice (first on line %u)",
                path, lineno, key, seen[i].line);
      *why = why_buffer;
      return -1;
    }

  r = service_set (service, key, value, &reason);
  if (r == -1) {
    snprintf (why_buffer, sizeof why_buffer, "%s:%u: %s=%s: %s",
              path, lineno, key, value, reason);
    *why = why_buffer;
    return -1;
  }
  if (r == 1 && options_set (options, key, value, &option_why) == -1) {
    snprintf (why_buffer, sizeof why_buffer, "%s:%u: %s",
              path, lineno, option_why);
    *why = why_buffer;
    return -1;
  }
  if (origins
      && config_origins_note (origins, key, value, path, lineno, why) == -1)
    return -1;
  /* Accepted, so KEY is one of the few valid names: short, and fewer
   * than CONFIG_MAX_KEYS of them.
   */
  if (*seen_count < CONFIG_MAX_KEYS && strlen (key) < MAX_KEY_BYTES) {
    strcpy (seen[*seen_count].name, key);
    seen[(*seen_count)++].line = lineno;
  }
  return 0;
}

/* Reads the one file PATH. */
static int
read_file (const char *path, struct cswap_options *options,
           struct cswap_service *service, struct config_origins *origins,
           const char **why)
{
  struct seen_key seen[CONFIG_MAX_KEYS];
  size_t seen_count = 0, size = 0;
  CLEANUP_FREE char *line = NULL;
  unsigned lineno = 0;
  ssize_t len;
  FILE *f;
  int r = 0;

  f = fopen (path, "re");
  if (f == NULL) {
    snprintf (why_buffer, sizeof why_buffer, "%s: %s", path,
              strerror (errno));
    *why = why_buffer;
    return -1;
  }
  errno = 0;
  while (r == 0 && (len = getline (&line, &size, f)) != -1) {
    lineno++;
    if ((size_t) len != strlen (line)) {
      snprintf (why_buffer, sizeof why_buffer, "%s:%u: a NUL byte in the line",
                path, lineno);
      *why = why_buffer;
      r = -1;
      break;
    }
    r = read_line (path, lineno, line, options, service, origins,
                   seen, &seen_count, why);
  }
  if (r == 0 && ferror (f)) {
    snprintf (why_buffer, sizeof why_buffer, "%s: %s", path,
              strerror (errno ? errno : EIO));
    *why = why_buffer;
    r = -1;
  }
  fclose (f);
  return r;
}

/* The remote keys that only make sense together, or NULL. */
static const char *
check_remote (const struct cswap_service *service)
{
  if (service->frontend == FRONTEND_REMOTE && !service->remote)
    return "frontend = remote: no server (remote = HOST)";
  if (service->remote_key[0] && !service->remote) {
    static char key_why[sizeof service->remote_key + 32];

    snprintf (key_why, sizeof key_why, "%s: no server (remote = HOST)",
              service->remote_key);
    return key_why;
  }
  if (service->remote_certfile != service->remote_keyfile)
    return "remote-certfile and remote-keyfile: one without the other";
  return NULL;
}

/* The keys that only make sense together, once every file is read:
 * ladder-online = follow needs the steps (not frontend = remote) and a way to
 * hand them to the daemon (its control socket); the remote device needs
 * its server.
 */
static int
check_service (const char *path, const struct cswap_service *service,
               const struct cswap_options *options, const char **why)
{
  const char *reason = check_remote (service), *prefix = "";

  if (reason == NULL && service->ladder_online == LADDER_ONLINE_FOLLOW) {
    prefix = "ladder-online = follow: ";
    if (service->frontend == FRONTEND_REMOTE)
      reason = "frontend = remote is one device, with no ladder to follow "
        "(use ladder-online = all)";
    else if (strcmp (options->ctl.path, CONTROL_PATH_NONE) == 0)
      reason = "the daemon is handed its steps over the control socket, "
        "and ctl = none has none";
  }
  if (reason == NULL)
    return 0;
  snprintf (why_buffer, sizeof why_buffer, "%s: %s%s", path, prefix, reason);
  *why = why_buffer;
  return -1;
}

int
config_file_read (const char *path, struct cswap_options *options,
                  struct cswap_service *service,
                  struct config_origins *origins, const char **why)
{
  struct config_dropins dropins;
  struct cswap_service ignored;
  int r;

  if (service == NULL) {
    config_service_init (&ignored);
    service = &ignored;
  }
  if (read_file (path, options, service, origins, why) == -1)
    return -1;
  r = config_dropins_list (path, &dropins, why);
  for (size_t i = 0; r == 0 && i < dropins.count; i++)
    if (!dropins.items[i].masked)
      r = read_file (dropins.items[i].path, options, service, origins, why);
  if (r == 0)
    r = check_service (path, service, options, why);
  if (origins == NULL) {
    config_dropins_free (&dropins);
    return r;
  }
  origins->dropins = dropins;
  if (r == 0 && (origins->main_path = strdup (path)) == NULL) {
    *why = "out of memory";
    r = -1;
  }
  return r;
}

int
config_file_load (const char *path, struct cswap_options *options,
                  struct cswap_service *service,
                  struct config_origins *origins, const char **why)
{
  const struct config_origin *origin;
  const char *finish_why;

  if (config_file_read (path, options, service, origins, why) == -1)
    return -1;
  if (options_finish (options, &finish_why) == -1) {
    /* The message starts with "KEY=": name the line that gave KEY. */
    char key[MAX_KEY_BYTES];

    snprintf (key, sizeof key, "%.*s", (int) strcspn (finish_why, "="),
              finish_why);
    origin = origins ? config_origins_find (origins, key) : NULL;
    if (origin)
      snprintf (why_buffer, sizeof why_buffer, "%s:%u: %s", origin->path,
                origin->line, finish_why);
    else
      snprintf (why_buffer, sizeof why_buffer, "%s: %s", path, finish_why);
    *why = why_buffer;
    return -1;
  }
  return 0;
}
