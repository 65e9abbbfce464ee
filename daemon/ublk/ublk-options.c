/* cswap: cswap-ublk's command line (see ublk-options.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "page.h"
#include "parse.h"
#include "ublk-options.h"

#define PROGRAM_NAME "cswap-ublk"

/* Tags per queue: while its thread serves one request the driver can
 * queue the others, and the thread then takes them in one round.  A tag
 * costs 24 bytes of descriptor and no buffer (user copy: ublk-queue.h).
 */
#define DEFAULT_DEPTH 16
#define MAX_DEPTH 128
#define MAX_QUEUES 64

static void
usage (void)
{
  printf ("Usage: %s [OPTIONS]\n"
          "Serves a compressed swap device as a ublk block device, "
          "/dev/ublkbN,\nprinted on standard output once it serves.\n\n"
          "Device options, as --key=value, --key value, -o key=value or "
          "key=value:\n", PROGRAM_NAME);
  options_print_help ();
  printf ("\n%s options:\n"
          "    --config=FILE     Device options from FILE and its drop-ins\n"
          "                      (cswap.conf(5)); options after it override\n"
          "    --queues=N        Queues, each with a thread bound to its CPU\n"
          "                      (default: one per CPU)\n"
          "    --depth=N         Requests in flight per queue (default %d)\n"
          "    --id=N            The device number N: /dev/ublkbN (default:\n"
          "                      the driver's choice; windows take N, N+1, …)\n"
          "    --windows=OFFSET:LENGTH,…  One device per window of the store\n"
          "                      (the ladder's steps), in that order\n"
          "    --device-list=FILE  Write the devices' paths to FILE once they\n"
          "                      serve, one a line\n"
          "    --recover=ID,…    Take over the devices a killed cswap-ublk left\n"
          "                      (one per window, same windows) instead of\n"
          "                      adding new ones; their old pages read as EIO\n"
          "    --discard-store   With --recover: a store that cannot be adopted\n"
          "                      (made for another size or by another version)\n"
          "                      is removed, its pages lost, instead of refused\n"
          "    --no-standby      No standby process: a killed daemon's devices\n"
          "                      wait for cswap up (or --recover)\n"
          "    --print-size      Print the store's size in bytes, exit\n"
          "    --features        Print what the kernel's ublk driver has, exit\n"
          "    --delete-dead N…  Delete the devices N… a killed cswap-ublk\n"
          "                      left (never a served one, nor swap), exit\n",
          PROGRAM_NAME, DEFAULT_DEPTH);
}

/* One option KEY with VALUE; 0, or -1 after saying why. */
static int
take_option (struct ublk_command_line *cl, const char *key, const char *value)
{
  const char *why;
  int64_t number;

  if (strcmp (key, "config") == 0) {
    if (config_file_read (value, &cl->device, &cl->service, NULL, &why) == -1)
      goto bad;
    return 0;
  }
  if (strcmp (key, "windows") == 0) {
    cl->windows = value;
    return 0;
  }
  if (strcmp (key, "device-list") == 0) {
    cl->device_list = value;
    return 0;
  }
  if (strcmp (key, "recover") == 0) {
    cl->recover = value;
    return 0;
  }
  if (strcmp (key, "queues") == 0 || strcmp (key, "depth") == 0
      || strcmp (key, "id") == 0) {
    int64_t max = key[0] == 'q' ? MAX_QUEUES : key[0] == 'd' ? MAX_DEPTH : 1 << 20;
    if (parse_int64 (value, key[0] == 'i' ? 0 : 1, max, &number, &why) == -1) {
      fprintf (stderr, "%s: --%s: %s\n", PROGRAM_NAME, key, why);
      return -1;
    }
    if (key[0] == 'q')
      cl->queues = number;
    else if (key[0] == 'd')
      cl->depth = number;
    else
      cl->dev_id = number;
    return 0;
  }
  if (options_set (&cl->device, key, value, &why) == 0)
    return 0;
 bad:
  fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
  return -1;
}

/* The command line into CL: 0, 1 (--help or --version done), or -1. */
static int
parse_command_line (int argc, char *argv[], struct ublk_command_line *cl)
{
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value;
    char key[64];
    size_t key_len;

    if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
      usage ();
      return 1;
    }
    if (strcmp (arg, "--print-size") == 0) {
      cl->print_size = true;
      continue;
    }
    if (strcmp (arg, "--no-standby") == 0) {
      cl->no_standby = true;
      continue;
    }
    if (strcmp (arg, "--discard-store") == 0) {
      cl->discard_store = true;
      continue;
    }
    if (strcmp (arg, "--version") == 0) {
      printf ("%s %s\n", PROGRAM_NAME, CSWAP_VERSION);
      return 1;
    }
    if (strcmp (arg, "-o") == 0) {
      if (++i == argc) {
        fprintf (stderr, "%s: -o needs KEY=VALUE\n", PROGRAM_NAME);
        return -1;
      }
      arg = argv[i];
    }
    else if (strncmp (arg, "--", 2) == 0)
      arg += 2;
    else if (strchr (arg, '=') == NULL) {
      fprintf (stderr, "%s: %s: not an option (see --help)\n", PROGRAM_NAME,
               arg);
      return -1;
    }
    key_len = strcspn (arg, "=");
    if (key_len == 0 || key_len >= sizeof key) {
      fprintf (stderr, "%s: %s: not an option (see --help)\n", PROGRAM_NAME,
               argv[i]);
      return -1;
    }
    memcpy (key, arg, key_len);
    key[key_len] = '\0';
    if (arg[key_len] == '=')
      value = arg + key_len + 1;
    else if (argv[i] != arg && strncmp (argv[i], "--", 2) == 0 && i + 1 < argc)
      value = argv[++i];
    else {
      fprintf (stderr, "%s: %s needs a value\n", PROGRAM_NAME, argv[i]);
      return -1;
    }
    if (take_option (cl, key, value) == -1)
      return -1;
  }
  return 0;
}

/* The windows in SPEC ("OFFSET:LENGTH,…", sizes as size= takes them)
 * into DEVICES over a store of STORE_BYTES; with no SPEC, one window, the
 * whole store.  Returns how many, or -1 after saying why.
 */
static int
parse_windows (const char *spec, uint64_t store_bytes,
               struct served_device devices[UBLK_MAX_WINDOWS])
{
  char copy[1024], *save = NULL;
  int count = 0;

  if (spec == NULL) {
    devices[0] = (struct served_device) { .length_bytes = store_bytes };
    return 1;
  }
  if (strlen (spec) >= sizeof copy) {
    fprintf (stderr, "%s: --windows: too long\n", PROGRAM_NAME);
    return -1;
  }
  strcpy (copy, spec);
  for (char *w = strtok_r (copy, ",", &save); w; w = strtok_r (NULL, ",", &save)) {
    char *colon = strchr (w, ':');
    uint64_t offset, length;
    const char *why = "OFFSET:LENGTH expected";

    if (count == UBLK_MAX_WINDOWS) {
      fprintf (stderr, "%s: --windows: more than %d\n", PROGRAM_NAME,
               UBLK_MAX_WINDOWS);
      return -1;
    }
    if (colon == NULL)
      goto bad;
    *colon = '\0';
    if (parse_size (w, &offset, &why) == -1
        || parse_size (colon + 1, &length, &why) == -1)
      goto bad;
    why = "not whole pages, empty, or past the end of the store";
    if (offset % CSWAP_PAGE_SIZE || length % CSWAP_PAGE_SIZE || length == 0
        || offset > store_bytes || length > store_bytes - offset)
      goto bad;
    devices[count++] = (struct served_device) {
      .offset_bytes = offset, .length_bytes = length,
    };
    continue;
  bad:
    fprintf (stderr, "%s: --windows: %s%s%s: %s\n", PROGRAM_NAME, w,
             colon ? ":" : "", colon ? colon + 1 : "", why);
    return -1;
  }
  if (count == 0) {
    fprintf (stderr, "%s: --windows: none given\n", PROGRAM_NAME);
    return -1;
  }
  return count;
}

/* --recover's device numbers, one per window: 0, or -1 after saying why. */
static int
parse_recover_ids (const char *spec, uint32_t ids[UBLK_MAX_WINDOWS], int count)
{
  char copy[256], *save = NULL;
  int n = 0;

  if (strlen (spec) >= sizeof copy) {
    fprintf (stderr, "%s: --recover: too long\n", PROGRAM_NAME);
    return -1;
  }
  strcpy (copy, spec);
  for (char *id = strtok_r (copy, ",", &save); id; id = strtok_r (NULL, ",", &save)) {
    int64_t number;
    const char *why;

    if (n == count) {
      n++;
      break;
    }
    if (parse_int64 (id, 0, UINT32_MAX - 1, &number, &why) == -1) {
      fprintf (stderr, "%s: --recover: %s: %s\n", PROGRAM_NAME, id, why);
      return -1;
    }
    ids[n++] = number;
  }
  if (n != count) {
    fprintf (stderr, "%s: --recover: %s: one device number per window "
             "(%d) expected\n", PROGRAM_NAME, spec, count);
    return -1;
  }
  return 0;
}

int
ublk_command_line_read (int argc, char *argv[], struct ublk_command_line *cl,
                        struct served_device devices[UBLK_MAX_WINDOWS],
                        uint32_t recover_ids[UBLK_MAX_WINDOWS], int *count)
{
  const char *why;
  int r;

  *cl = (struct ublk_command_line) { .depth = DEFAULT_DEPTH, .dev_id = -1 };
  options_init (&cl->device);
  config_service_init (&cl->service);
  r = parse_command_line (argc, argv, cl);
  if (r != 0)
    return r;
  if (options_finish (&cl->device, &why) == -1) {
    fprintf (stderr, "%s: %s\n", PROGRAM_NAME, why);
    return -1;
  }
  if (cl->print_size) {
    printf ("%llu\n", (unsigned long long) cl->device.store.size_bytes);
    return 1;
  }
  *count = parse_windows (cl->windows, cl->device.store.size_bytes, devices);
  if (*count == -1)
    return -1;
  if (cl->recover
      && parse_recover_ids (cl->recover, recover_ids, *count) == -1)
    return -1;
  if (cl->discard_store && !cl->recover) {
    fprintf (stderr, "%s: --discard-store: only with --recover\n",
             PROGRAM_NAME);
    return -1;
  }
  if (cl->queues == 0) {
    long cpus = sysconf (_SC_NPROCESSORS_CONF);
    cl->queues = cpus < 1 ? 1 : cpus > MAX_QUEUES ? MAX_QUEUES : cpus;
  }
  return 0;
}
