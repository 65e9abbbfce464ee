/* cswap: remote/remote-negotiate.c — one connection to the server, ready
 * for the nbd driver (remote-negotiate.h).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ktls-session.h"
#include "remote-negotiate.h"

/* A server that stops answering during the handshake is given up. */
#define NEGOTIATE_SECONDS 30

/* A TCP connection to HOST:PORT, with the negotiation's time limit on it
 * (which hand_over lifts before the kernel takes it), or -1.
 */
static int
tcp_connect (const struct remote_target *target)
{
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
  struct addrinfo *addresses, *a;
  int error, fd = -1, saved_errno = 0;

  error = getaddrinfo (target->host, target->port, &hints, &addresses);
  if (error) {
    fprintf (stderr, "cswap-connect: %s: %s\n", target->server, gai_strerror (error));
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
    fprintf (stderr, "cswap-connect: %s: %s\n", target->server, strerror (saved_errno));
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

int
remote_negotiate (const struct remote_target *target, struct nbd_channel *channel,
                  struct nbd_export_info *info)
{
  *channel = (struct nbd_channel) { .server = target->server };
  channel->fd = tcp_connect (target);
  if (channel->fd == -1 || nbd_greet (channel))
    return -1;
  if (target->context) {
    if (nbd_start_tls (channel))
      return -1;
    channel->ssl = ktls_handshake (target->context, channel->fd,
                                   target->tls_hostname, target->server);
    if (channel->ssl == NULL)
      return -1;
  }
  if (nbd_go (channel, target->export, info))
    return -1;
  hand_over (channel->fd);
  return 0;
}

void
remote_release (struct nbd_channel *channel)
{
  SSL_free (channel->ssl);
  if (channel->fd >= 0)
    close (channel->fd);
  *channel = (struct nbd_channel) { .fd = -1 };
}
