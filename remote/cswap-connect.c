/* cswap: remote/cswap-connect.c — connects /dev/nbdN to a cswap server
 * over TLS that the kernel runs, and exits.
 *
 * nbd-client's TLS keeps a process of its own between the kernel and the
 * network, relaying every page; under whole-machine memory pressure that
 * path hung in the VM test bed (doc/design.md, "Securing the kernel
 * client's channel").  Here the NBD handshake, NBD_OPT_STARTTLS and the
 * TLS handshake run in this process; the session's keys then go into the
 * socket (kernel TLS), NBD_OPT_GO already goes through the kernel's
 * records, and the sockets are handed to the nbd driver with
 * NBD_CMD_CONNECT, as nbd-client's netlink mode does.  No process is
 * left in the swap path.  With --persist one stays beside it, out of the
 * path, to replace a connection that dies (link-watch.h).
 *
 * Usage: cswap-connect [OPTION]... HOST PORT /dev/nbdN (see --help).
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktls-session.h"
#include "link-watch.h"
#include "memory-safety.h"
#include "nbd-channel.h"
#include "nbd-netlink.h"
#include "page.h"
#include "parse.h"
#include "remote-negotiate.h"
#include "tool-option.h"

/* --persist's request timeout when --timeout gives none: without one, a
 * request in flight on a connection that died is never sent again.
 */
#define PERSIST_DEFAULT_TIMEOUT_S 30

struct options {
  const char *host, *port, *device, *export;
  unsigned connections, index;
  uint64_t timeout;
  uint64_t persist;             /* the dead-connection timeout; 0: exit */
  bool no_tls;
  struct tls_files tls;
};

static void
usage (FILE *out)
{
  fputs ("Usage: cswap-connect [OPTION]... HOST PORT /dev/nbdN\n"
         "Connect /dev/nbdN to an NBD server (nbdkit cswap) over TLS that the\n"
         "kernel runs (TLS 1.2, AES-GCM), and exit: no process is left between\n"
         "the kernel's nbd driver and the network.\n"
         "\n"
         "  -N, --export NAME        the export (default: the server's default)\n"
         "  -C, --connections N      sockets, 1 to 16 (default 1)\n"
         "  -t, --timeout SECONDS    the driver's per-request timeout (default: its own;\n"
         "                           with --persist, 30)\n"
         "  -p, --persist SECONDS    stay in the background and replace a connection\n"
         "                           that dies, while requests wait up to SECONDS for\n"
         "                           it; never to an export whose contents changed\n"
         "      --certfile FILE      our certificate (with --keyfile)\n"
         "      --keyfile FILE       its key\n"
         "      --cacertfile FILE    the CA the server's certificate must chain to\n"
         "                           (default: the system's)\n"
         "      --tlshostname NAME   the name the server's certificate must carry\n"
         "                           (default: HOST)\n"
         "      --no-tls             plain TCP, for a network trusted or secured\n"
         "                           underneath (WireGuard, IPsec)\n"
         "  -h, --help               this text\n"
         "  -V, --version            the version\n", out);
}

static void
parse_options (int argc, char *argv[], struct options *options)
{
  enum { CERTFILE = 256, KEYFILE, CACERTFILE, TLSHOSTNAME, NO_TLS };
  static const struct option long_options[] = {
    { "export", required_argument, NULL, 'N' },
    { "connections", required_argument, NULL, 'C' },
    { "timeout", required_argument, NULL, 't' },
    { "persist", required_argument, NULL, 'p' },
    { "certfile", required_argument, NULL, CERTFILE },
    { "keyfile", required_argument, NULL, KEYFILE },
    { "cacertfile", required_argument, NULL, CACERTFILE },
    { "tlshostname", required_argument, NULL, TLSHOSTNAME },
    { "no-tls", no_argument, NULL, NO_TLS },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 }
  };
  int c;
  uint64_t index;
  const char *why;

  *options = (struct options) { .export = "", .connections = 1 };
  while ((c = getopt_long (argc, argv, "N:C:t:p:hV", long_options, NULL)) != -1) {
    switch (c) {
    case 'N': options->export = optarg; break;
    case 'C':
      options->connections = tool_option_uint64 ("--connections", optarg, 1, NBD_NETLINK_MAX_SOCKETS);
      break;
    case 't': options->timeout = tool_option_uint64 ("--timeout", optarg, 1, INT_MAX); break;
    case 'p': options->persist = tool_option_uint64 ("--persist", optarg, 1, INT_MAX); break;
    case CERTFILE: options->tls.certfile = optarg; break;
    case KEYFILE: options->tls.keyfile = optarg; break;
    case CACERTFILE: options->tls.cacertfile = optarg; break;
    case TLSHOSTNAME: options->tls.hostname = optarg; break;
    case NO_TLS: options->no_tls = true; break;
    case 'h': usage (stdout); exit (0);
    case 'V': printf ("cswap-connect %s\n", CSWAP_VERSION); exit (0);
    default: usage (stderr); exit (TOOL_EXIT_SETUP);
    }
  }
  if (argc - optind != 3) {
    fputs ("cswap-connect: HOST PORT /dev/nbdN are needed\n", stderr);
    usage (stderr);
    exit (TOOL_EXIT_SETUP);
  }
  options->host = argv[optind];
  options->port = argv[optind + 1];
  options->device = argv[optind + 2];
  if (options->no_tls && (options->tls.certfile || options->tls.keyfile
                          || options->tls.cacertfile || options->tls.hostname)) {
    fputs ("cswap-connect: --no-tls takes none of the TLS options\n", stderr);
    exit (TOOL_EXIT_SETUP);
  }
  if (!options->tls.certfile != !options->tls.keyfile) {
    fputs ("cswap-connect: --certfile and --keyfile go together\n", stderr);
    exit (TOOL_EXIT_SETUP);
  }
  if (strncmp (options->device, "/dev/nbd", 8)
      || parse_uint64 (options->device + 8, 0, UINT32_MAX, &index, &why)) {
    fprintf (stderr, "cswap-connect: %s: not /dev/nbdN\n", options->device);
    exit (TOOL_EXIT_SETUP);
  }
  options->index = index;
  if (options->tls.hostname == NULL)
    options->tls.hostname = options->host;
  if (options->persist && options->timeout == 0)
    options->timeout = PERSIST_DEFAULT_TIMEOUT_S;
}

/* --persist: the rest runs in a child, which stays; the parent exits with
 * the child's connect status, told through a pipe, so that the caller
 * still learns whether the device connected.  The child must be the one
 * that connects: the driver records the connecting task
 * (/sys/block/nbdN/pid), which is how the watcher knows the device is
 * still its own.  Returns the pipe's write end in the child.
 */
static int
background (void)
{
  int ready[2];
  pid_t child;
  char status;

  if (pipe2 (ready, O_CLOEXEC)) {
    perror ("cswap-connect: pipe");
    exit (1);
  }
  child = fork ();
  if (child == -1) {
    perror ("cswap-connect: fork");
    exit (1);
  }
  if (child > 0) {
    close (ready[1]);
    exit (read (ready[0], &status, 1) == 1 ? status : 1);
  }
  close (ready[0]);
  setsid ();
  return ready[1];
}

/* Tells the waiting parent STATUS, and lets go of standard output, which
 * a caller may be reading to its end.
 */
static void
report (int ready, char status)
{
  int null = open ("/dev/null", O_WRONLY | O_CLOEXEC);

  fflush (stdout);
  if (null >= 0) {
    dup2 (null, STDOUT_FILENO);
    close (null);
  }
  if (write (ready, &status, 1) != 1)
    perror ("cswap-connect: telling the parent");
  close (ready);
}

int
main (int argc, char *argv[])
{
  struct options options;
  struct nbd_channel channels[NBD_NETLINK_MAX_SOCKETS];
  int fds[NBD_NETLINK_MAX_SOCKETS];
  struct nbd_export_info info, first = { 0 };
  struct nbd_device_settings settings;
  struct remote_target target;
  char server[300];
  int status = 1, ready = -1, watch = -1;
  unsigned i, n = 0;

  parse_options (argc, argv, &options);
  /* Before the TLS key is read: a core dump would hold it, and with
   * --persist this process (and the child it forks, which inherits the
   * settings) lives as long as the device.
   */
  memory_safety_forbid_core_dumps ();
  snprintf (server, sizeof server, "%s:%s", options.host, options.port);
  target = (struct remote_target) {
    .host = options.host, .port = options.port, .export = options.export,
    .tls_hostname = options.tls.hostname, .server = server,
  };
  if (options.persist) {
    ready = background ();
    /* Before the device connects: a connection may die at once. */
    watch = nbd_netlink_watch ();
    if (watch < 0)
      goto out;
  }
  if (!options.no_tls) {
    target.context = ktls_context_new (&options.tls);
    if (target.context == NULL)
      goto out;
  }
  for (; n < options.connections; n++) {
    if (remote_negotiate (&target, &channels[n], &info)) {
      n++;                      /* channels[n] wants releasing too */
      goto out;
    }
    if (n > 0 && (info.size != first.size
                  || info.transmission_flags != first.transmission_flags)) {
      fprintf (stderr, "cswap-connect: %s: connection %u saw another export\n",
               server, n + 1);
      n++;
      goto out;
    }
    first = info;
    fds[n] = channels[n].fd;
  }
  settings = (struct nbd_device_settings) {
    .index = options.index, .size = first.size, .block_size = CSWAP_PAGE_SIZE,
    .server_flags = first.transmission_flags, .timeout = options.timeout,
    .dead_conn_timeout = options.persist,
  };
  if (nbd_netlink_connect (&settings, fds, n) == 0) {
    printf ("%s: %s export \"%s\", %llu bytes, %u connection%s over %s%s\n",
            options.device, server, options.export,
            (unsigned long long) first.size, n, n == 1 ? "" : "s",
            options.no_tls ? "plain TCP" : "kernel TLS",
            options.persist ? ", kept connected" : "");
    status = 0;
  }

 out:
  /* The driver holds its own reference to each socket: ours go. */
  for (i = 0; i < n; i++)
    remote_release (&channels[i]);
  if (options.persist) {
    report (ready, status);
    if (status == 0) {
      struct link_watch link_watch = {
        .target = &target, .index = options.index, .export = first,
        .watch = watch,
      };

      link_watch_protect ();
      status = link_watch_run (&link_watch);
    }
  }
  SSL_CTX_free (target.context);
  return status;
}
