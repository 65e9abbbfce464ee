/* cswap: a tiny JSON writer for control replies (internal to control/).
 *
 * Appends to a growable buffer that never exceeds a set limit: past it the
 * writer stops writing and json_finish() reports the overflow, so a reply
 * can never grow without bound.  Strings are escaped (quotes, backslashes,
 * control characters) and bytes that are not valid UTF-8 become U+FFFD,
 * so a reply is valid JSON whatever bytes a client sent.
 *
 * Every value call takes a KEY: the member name inside an object, NULL
 * inside an array.  Commas are placed by the writer.
 */
#ifndef CSWAP_CONTROL_JSON_H
#define CSWAP_CONTROL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 8

struct json {
  char *data;
  size_t len, capacity, limit;
  bool failed;                  /* over the limit, out of memory or nesting */
  unsigned depth;
  bool has_member[JSON_MAX_DEPTH]; /* does the open container need a comma */
};

extern void json_init (struct json *j, size_t limit);
/* Frees the buffer unless json_finish() handed it over. */
extern void json_free (struct json *j);

extern void json_object_begin (struct json *j, const char *key);
extern void json_object_end (struct json *j);
extern void json_array_begin (struct json *j, const char *key);
extern void json_array_end (struct json *j);

extern void json_string (struct json *j, const char *key, const char *value);
/* A string of LEN bytes that need not be NUL-terminated. */
extern void json_string_len (struct json *j, const char *key,
                             const char *value, size_t len);
extern void json_uint (struct json *j, const char *key, uint64_t value);
extern void json_int (struct json *j, const char *key, int64_t value);
/* Finite values only: NaN and infinities are written as null. */
extern void json_double (struct json *j, const char *key, double value);
extern void json_bool (struct json *j, const char *key, bool value);

/* Closes the document with "\n".  Returns the text (*LEN bytes, then a
 * NUL) for the caller to free, or NULL if anything failed.
 */
extern char *json_finish (struct json *j, size_t *len);

#endif /* CSWAP_CONTROL_JSON_H */
