/* cswap: common/contents-id.h — how a cswap export tells a client which
 * contents it holds.
 *
 * The nbdkit plugin ends each export's NBD description (NBD_INFO_DESCRIPTION)
 * with CONTENTS_ID_LABEL and 16 hex digits: a random id, new whenever the
 * export's pages start empty (daemon/nbdkit/nbd-exports.h).  A client that
 * connects again after a dropped connection (cswap-connect --persist)
 * reads it back: the same id means every page it left is still there; a
 * new one, that the server restarted or dropped the export, and that the
 * pages it left read as zeros now.
 */
#ifndef CSWAP_CONTENTS_ID_H
#define CSWAP_CONTENTS_ID_H

#define CONTENTS_ID_LABEL "contents id "
#define CONTENTS_ID_DIGITS 16

#endif
