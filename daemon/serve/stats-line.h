/* cswap: the one-line stats summary a front end prints when it stops.
 *
 * "cswap: stats key=value …" on one line, so that a script that stops the
 * server can grep what the store held at the end, when the control
 * socket (`cswapctl stats`) is gone with the daemon.  daemon_stop() prints
 * it (daemon-life.h), so both front ends print exactly the same line.
 */
#ifndef CSWAP_STATS_LINE_H
#define CSWAP_STATS_LINE_H

#include <stdio.h>

#include "store.h"

extern void stats_line_print (FILE *f, struct store *store);

#endif /* CSWAP_STATS_LINE_H */
