/* cswap: checked parsers for numbers in options and commands.
 *
 * Every number cswap reads from a user goes through these: no atoi, no
 * unchecked strtoul.  Each rejects empty strings, signs where none is
 * allowed, trailing junk and overflow, and returns -1 with a reason.
 */
#ifndef CSWAP_PARSE_H
#define CSWAP_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* A size in bytes: digits with an optional binary suffix: k/K (KiB), M, G,
 * T, P, E, optionally followed by "iB" or "B" ("4G", "4GiB", "4096").
 */
extern int parse_size (const char *s, uint64_t *bytes, const char **why);

/* A size that is 0 (none) or within [MIN, MAX]: the writeback budget's
 * limit and burst.
 */
extern int parse_size_or_zero (const char *s, uint64_t min, uint64_t max,
                               uint64_t *bytes, const char **why);

/* A size, or a percentage of TOTAL written "N%" (N may have a fraction,
 * "12.5%", and is at most 100).
 */
extern int parse_size_or_percent (const char *s, uint64_t total,
                                  uint64_t *bytes, const char **why);

/* A memory size: a size ("4G"); "N%" of this machine's physical memory;
 * or an expression of it in MiB (size-expr.h: "min(ram / 2, 4096)").  The
 * last two, computed here, are rounded down to a whole page.  The machine's
 * memory is CSWAP_TEST_RAM_MIB MiB where that is set (for tests).
 */
extern int parse_memory_size (const char *s, uint64_t *bytes, const char **why);

/* A pool limit: a memory size that is 0 (no limit) or at least one page
 * (4096 bytes).  The allocator counts the limit in whole pages, and 0 of
 * them is no limit to it; a percentage or expression that rounds down to
 * 0 is refused too, rather than taken as none.
 */
extern int parse_pool_limit (const char *s, uint64_t *bytes, const char **why);

/* "yes" or "no" (also "true"/"false", "on"/"off", "1"/"0"). */
extern int parse_yes_no (const char *s, bool *value, const char **why);

/* Exactly one of NAMES[0..COUNT): *INDEX says which (an enum whose
 * values index NAMES, say).  Else -1, and *WHY is "use A, B or C" (in a
 * buffer of the calling thread's).
 */
extern int parse_choice (const char *s, const char *const *names,
                         unsigned count, unsigned *index, const char **why);

/* Exactly FIRST or SECOND: *IS_SECOND says which.  Else -1, and *WHY is
 * "use FIRST or SECOND" (parse_choice).
 */
extern int parse_either (const char *s, const char *first, const char *second,
                         bool *is_second, const char **why);

/* A decimal integer without a sign in [MIN, MAX]. */
extern int parse_uint64 (const char *s, uint64_t min, uint64_t max,
                         uint64_t *value, const char **why);

/* A decimal integer in [MIN, MAX]. */
extern int parse_int64 (const char *s, int64_t min, int64_t max,
                        int64_t *value, const char **why);

#endif /* CSWAP_PARSE_H */
