/* cswap: size expressions (see size-expr.h for the grammar).
 *
 * A recursive-descent parser that evaluates as it reads: one function per
 * rule of the grammar (the two binary rules share their loop), each
 * returning true with the rule's value, or false once it has written the
 * first error into the message buffer.  Nothing is built and nothing is
 * allocated.  Every literal and every operation's result is checked at
 * once, so an overflow is reported at the operator that made it, and no
 * later step ever sees an infinity or a NaN.
 *
 * Locking: none.  The message buffer is static, as are the other option
 * parsers' (daemon/config/options.c): they run before any thread starts, and
 * afterwards only on the control thread (`set pool-limit`).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "page.h"
#include "size-expr.h"

#define MIB_SHIFT 20

/* 2^44 MiB = 16 EiB: a value this large has no 64-bit count of bytes. */
#define MAX_MIB 17592186044416.0

/* The deepest nesting of parentheses: the parser recurses once a level,
 * and a line of a million '(' must not exhaust a thread's stack.
 */
#define MAX_DEPTH 32

/* How much of the text an error quotes after "found". */
#define QUOTED_BYTES 12

struct parser {
  const char *text;             /* the whole expression, for columns */
  const char *next;             /* the next byte to read */
  double ram_mib;
  unsigned depth;               /* parentheses open */
};

static char why_buffer[256];

/* Writes "WHAT at column N" as the error, then ": DETAIL" if there is
 * one.
 */
__attribute__ ((format (printf, 4, 5)))
static bool
fail_at (const struct parser *p, const char *at, const char *detail,
         const char *fmt, ...)
{
  size_t len;
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why_buffer, sizeof why_buffer, fmt, ap);
  va_end (ap);
  len = strlen (why_buffer);
  snprintf (why_buffer + len, sizeof why_buffer - len, " at column %d%s%s",
            (int) (at - p->text) + 1, detail ? ": " : "", detail ? detail : "");
  return false;
}

/* "expected WHAT at column N, found 'TEXT'" (or "found the end"). */
static bool
expected (const struct parser *p, const char *what)
{
  size_t len;

  fail_at (p, p->next, NULL, "expected %s", what);
  len = strlen (why_buffer);
  if (*p->next == '\0')
    snprintf (why_buffer + len, sizeof why_buffer - len, ", found the end");
  else
    snprintf (why_buffer + len, sizeof why_buffer - len, ", found '%.*s'",
              QUOTED_BYTES, p->next);
  return false;
}

static void
skip_blanks (struct parser *p)
{
  while (*p->next == ' ' || *p->next == '\t')
    p->next++;
}

/* Checks a value made at AT (a literal or an operator). */
static bool
in_range (const struct parser *p, const char *at, double value)
{
  if (!(value > -MAX_MIB && value < MAX_MIB))    /* false for a NaN too */
    return fail_at (p, at, "a value beyond 16 EiB", "overflow");
  return true;
}

static bool parse_expression (struct parser *p, double *value);

/* Steps past a '(' at p->next. */
static bool
open_parenthesis (struct parser *p)
{
  if (p->depth == MAX_DEPTH)
    return fail_at (p, p->next, NULL, "more than %d parentheses deep",
                    MAX_DEPTH);
  p->depth++;
  p->next++;
  return true;
}

/* Steps past the ')' that must be at p->next. */
static bool
close_parenthesis (struct parser *p, const char *what)
{
  skip_blanks (p);
  if (*p->next != ')')
    return expected (p, what);
  p->depth--;
  p->next++;
  return true;
}

/* NUMBER := DIGITS [ '.' DIGITS ], at p->next (a digit). */
static bool
parse_number (struct parser *p, double *value)
{
  const char *start = p->next;
  double scale = 1;

  *value = 0;
  while (isdigit ((unsigned char) *p->next))
    *value = *value * 10 + (*p->next++ - '0');
  if (*p->next == '.') {
    p->next++;
    if (!isdigit ((unsigned char) *p->next))
      return expected (p, "a digit after '.'");
    while (isdigit ((unsigned char) *p->next)) {
      scale /= 10;
      *value += scale * (*p->next++ - '0');
    }
  }
  if (isalpha ((unsigned char) *p->next))
    return fail_at (p, p->next,
                    "numbers in an expression are MiB, without a suffix",
                    "unexpected '%c'", *p->next);
  return in_range (p, start, *value);
}

/* ( 'min' | 'max' ) '(' expression { ',' expression } ')', after the
 * name: the smallest or largest of the expressions.
 */
static bool
parse_min_max (struct parser *p, bool is_min, double *value)
{
  double other;

  skip_blanks (p);
  if (*p->next != '(')
    return expected (p, is_min ? "'(' after min" : "'(' after max");
  if (!open_parenthesis (p) || !parse_expression (p, value))
    return false;
  for (skip_blanks (p); *p->next == ','; skip_blanks (p)) {
    p->next++;
    if (!parse_expression (p, &other))
      return false;
    if (is_min ? other < *value : other > *value)
      *value = other;
  }
  return close_parenthesis (p, "',' or ')'");
}

/* A name at p->next (a letter): ram, or a call of min or max. */
static bool
parse_name (struct parser *p, double *value)
{
  const char *start = p->next;
  size_t len;

  while (isalnum ((unsigned char) *p->next) || *p->next == '_')
    p->next++;
  len = p->next - start;
  if (len == 3 && strncmp (start, "ram", 3) == 0) {
    *value = p->ram_mib;
    return true;
  }
  if (len == 3 && (strncmp (start, "min", 3) == 0
                   || strncmp (start, "max", 3) == 0))
    return parse_min_max (p, start[1] == 'i', value);
  return fail_at (p, start, "use ram, min or max", "unknown name '%.*s'",
                  (int) (len < 32 ? len : 32), start);
}

/* factor := NUMBER | name | '(' expression ')' */
static bool
parse_factor (struct parser *p, double *value)
{
  skip_blanks (p);
  if (isdigit ((unsigned char) *p->next))
    return parse_number (p, value);
  if (isalpha ((unsigned char) *p->next))
    return parse_name (p, value);
  if (*p->next != '(')
    return expected (p, "a number, ram, min, max or '('");
  return open_parenthesis (p) && parse_expression (p, value)
         && close_parenthesis (p, "')'");
}

/* OPERAND { OP OPERAND } with OP one of OPS, applied left to right. */
static bool
parse_left_to_right (struct parser *p, const char *ops,
                     bool (*parse_operand) (struct parser *, double *),
                     double *value)
{
  double right;

  if (!parse_operand (p, value))
    return false;
  for (;;) {
    const char *op;

    skip_blanks (p);
    op = p->next;
    if (*op == '\0' || strchr (ops, *op) == NULL)
      return true;
    p->next++;
    if (!parse_operand (p, &right))
      return false;
    switch (*op) {
    case '+': *value += right; break;
    case '-': *value -= right; break;
    case '*': *value *= right; break;
    default:
      if (right == 0)
        return fail_at (p, op, NULL, "division by zero");
      *value /= right;
    }
    if (!in_range (p, op, *value))
      return false;
  }
}

/* term := factor { ('*' | '/') factor } */
static bool
parse_term (struct parser *p, double *value)
{
  return parse_left_to_right (p, "*/", parse_factor, value);
}

/* expression := term { ('+' | '-') term } */
static bool
parse_expression (struct parser *p, double *value)
{
  return parse_left_to_right (p, "+-", parse_term, value);
}

int
size_expr_bytes (const char *text, uint64_t ram_bytes, uint64_t *bytes,
                 const char **why)
{
  struct parser p = {
    .text = text, .next = text,
    .ram_mib = (double) ram_bytes / (1 << MIB_SHIFT),
  };
  double mib;
  uint64_t result;

  if (!parse_expression (&p, &mib)) {
    *why = why_buffer;
    return -1;
  }
  skip_blanks (&p);
  if (*p.next != '\0') {
    expected (&p, "an operator (+ - * /) or the end");
    *why = why_buffer;
    return -1;
  }
  if (!(mib > 0)) {
    snprintf (why_buffer, sizeof why_buffer,
              "the result is %g MiB: a size must be more than zero", mib);
    *why = why_buffer;
    return -1;
  }
  result = (uint64_t) (mib * (1 << MIB_SHIFT)) / CSWAP_PAGE_SIZE
           * CSWAP_PAGE_SIZE;
  if (result == 0) {
    snprintf (why_buffer, sizeof why_buffer,
              "the result is %g MiB: less than one page (4 KiB)", mib);
    *why = why_buffer;
    return -1;
  }
  *bytes = result;
  return 0;
}
