/* cswap: sizes written as expressions of the machine's memory, as
 * zram-generator's zram-size (cswap.conf(5), SIZES):
 *
 *   size = min(ram / 2, 4096)
 *
 *   expression := term { ('+' | '-') term }
 *   term       := factor { ('*' | '/') factor }
 *   factor     := NUMBER | 'ram' | ('min' | 'max') '(' expression
 *                 { ',' expression } ')' | '(' expression ')'
 *   NUMBER     := DIGITS [ '.' DIGITS ]
 *
 * Every value is in MiB: `ram` is the machine's memory, a number is that
 * many MiB (4096 is 4 GiB), and so is the result.  Blanks may go between
 * tokens.  Arithmetic is in double precision, as zram-generator's.
 */
#ifndef CSWAP_SIZE_EXPR_H
#define CSWAP_SIZE_EXPR_H

#include <stdint.h>

/* Evaluates TEXT with `ram` = RAM_BYTES, and sets *BYTES to the result
 * rounded down to a whole page.  Returns 0, or -1 with *WHY set to what
 * was expected and where ("expected ')' at column 12, found ','"), to a
 * division by zero, to an overflow (a value beyond 16 EiB, the most 64
 * bits of bytes hold), or to a result of less than one page.  The message
 * lives in a static buffer until the next call.
 */
extern int size_expr_bytes (const char *text, uint64_t ram_bytes,
                            uint64_t *bytes, const char **why);

#endif /* CSWAP_SIZE_EXPR_H */
