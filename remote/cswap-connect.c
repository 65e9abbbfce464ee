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
 * left in the swap path.
 *
 * Usage: cswap-connect [OPTION]... HOST PORT /dev/nbdN (see --help).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ktls-session.h"
#include "nbd-channel.h"
#include "nbd-netlink.h"
#include "page.h"
#include "parse.h"
#include "tool-option.h"

/* A server that stops answering during the handshake is given up. */
#define NEGOTIATE_SECONDS 30

struct options {
  const char *host, *port, *device, *export;
  unsigned connections, index;
  uint64_t timeout;
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
         "  -t, --timeout SECONDS    the driver's per-request timeout (default: its own)\n"
         "      --certfile FILE      our certificate (with --keyfile)\n"
         "      --keyfile FILE       its key\n"
         "      --cacertfile FILE    the CA the server's certificate must chain to\n"
         "                           (default: the system's)\n"
         "      --tlshostname NAME   the name the server's certificate must carry\n"
         "                           (default: HOST)\n"
         "  -h, --help               this text\n"
         "  -V, --version            the version\n", out);
}

static void
parse_options (int argc, char *argv[], struct options *options)
{
  enum { CERTFILE = 256, KEYFILE, CACERTFILE, TLSHOSTNAME };
  static const struct option long_options[] = {
    { "export", required_argument, NULL, 'N' },
    { "connections", required_argument, NULL, 'C' },
    { "timeout", required_argument, NULL, 't' },
    { "certfile", required_argument, NULL, CERTFILE },
    { "keyfile", required_argument, NULL, KEYFILE },
    { "cacertfile", required_argument, NULL, CACERTFILE },
    { "tlshostname", required_argument, NULL, TLSHOSTNAME },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 }
  };
  int c;
  uint64_t index;
  const char *why;

  *options = (struct options) { .export = "", .connections = 1 };
  while ((c = getopt_long (argc, argv, "N:C:t:hV", long_options, NULL)) != -1) {
    switch (c) {
    case 'N': options->export = optarg; break;
    case 'C':
      options->connections = tool_option_uint64 ("--connections", optarg, 1, NBD_NETLINK_MAX_SOCKETS);
      break;
    case 't': options->timeout = tool_option_uint64 ("--timeout", optarg, 1, INT_MAX); break;
    case CERTFILE: options->tls.certfile = optarg; break;
    case KEYFILE: options->tls.keyfile = optarg; break;
    case CACERTFILE: options->tls.cacertfile = optarg; break;
    case TLSHOSTNAME: options->tls.hostname = optarg; break;
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
}

/* A TCP connection to HOST:PORT, with the negotiation's time limit on it
 * (which hand_over lifts before the kernel takes it), or -1.
 */
static int
tcp_connect (const char *host, const char *port, const char *server)
{
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
  struct addrinfo *addresses, *a;
  int error, fd = -1, saved_errno = 0;

  error = getaddrinfo (host, port, &hints, &addresses);
  if (error) {
    fprintf (stderr, "cswap-connect: %s: %s\n", server, gai_strerror (error));
    return -1;
  }
  for (a = addresses; a && fd == -1; a = a->ai_next) {
    struct timeval limit = { .tv_sec = NEGOTIATE_SECONDS };

    fd = socket (a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd == -1)
      continue;
    setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    if (connect (fd, a->ai_addr, a->ai_addrlen) == -1) {
      saved_errno = errno;
      close (fd);
      fd = -1;
    }
  }
  freeaddrinfo (addresses);
  if (fd == -1)
    fprintf (stderr, "cswap-connect: %s: %s\n", server, strerror (saved_errno));
  return fd;
}

/* The socket as the nbd driver wants it: no time limit of ours on its
 * reads and writes (its own timeout is --timeout), no Nagle delay.
 */
static void
hand_over (int fd)
{
  struct timeval none = { 0 };
  int on = 1;

  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

/* One connection negotiated to the transmission phase, over kernel TLS. */
static int
negotiate (const struct options *options, SSL_CTX *context, const char *server,
           struct nbd_channel *channel, struct nbd_export_info *info)
{
  *channel = (struct nbd_channel) { .server = server };
  channel->fd = tcp_connect (options->host, options->port, server);
  if (channel->fd == -1 || nbd_greet (channel) || nbd_start_tls (channel))
    return -1;
  channel->ssl = ktls_handshake (context, channel->fd, options->tls.hostname, server);
  if (channel->ssl == NULL || nbd_go (channel, options->export, info))
    return -1;
  hand_over (channel->fd);
  return 0;
}

int
main (int argc, char *argv[])
{
  struct options options;
  struct nbd_channel channels[NBD_NETLINK_MAX_SOCKETS] = { 0 };
  int fds[NBD_NETLINK_MAX_SOCKETS];
  struct nbd_export_info info, first = { 0 };
  struct nbd_device_settings settings;
  char server[300];
  SSL_CTX *context;
  int status = 1;
  unsigned i, n = 0;

  parse_options (argc, argv, &options);
  snprintf (server, sizeof server, "%s:%s", options.host, options.port);
  context = ktls_context_new (&options.tls);
  if (context == NULL)
    return 1;
  for (; n < options.connections; n++) {
    if (negotiate (&options, context, server, &channels[n], &info))
      goto out;
    if (n > 0 && (info.size != first.size
                  || info.transmission_flags != first.transmission_flags)) {
      fprintf (stderr, "cswap-connect: %s: connection %u saw another export\n",
               server, n + 1);
      goto out;
    }
    first = info;
    fds[n] = channels[n].fd;
  }
  settings = (struct nbd_device_settings) {
    .index = options.index, .size = first.size, .block_size = CSWAP_PAGE_SIZE,
    .server_flags = first.transmission_flags, .timeout = options.timeout,
  };
  if (nbd_netlink_connect (&settings, fds, n) == 0) {
    printf ("%s: %s export \"%s\", %llu bytes, %u connection%s over kernel TLS\n",
            options.device, server, options.export,
            (unsigned long long) first.size, n, n == 1 ? "" : "s");
    status = 0;
  }

 out:
  /* The driver holds its own reference to each socket: ours go.  No
   * SSL_shutdown: a close_notify would reach the driver as an error.
   */
  for (i = 0; i <= n && i < options.connections; i++) {
    SSL_free (channels[i].ssl);
    if (channels[i].fd >= 0)
      close (channels[i].fd);
  }
  SSL_CTX_free (context);
  return status;
}
