/* cswap: the JSON writer (see json.h).
 *
 * Locking: none; a struct json belongs to one thread.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void
json_init (struct json *j, size_t limit)
{
  *j = (struct json) { .limit = limit };
}

void
json_free (struct json *j)
{
  free (j->data);
  j->data = NULL;
}

/* Makes room for N more bytes and the final NUL, doubling the buffer so
 * that a reply costs a handful of reallocs, never more than the limit.
 */
static bool
make_room (struct json *j, size_t n)
{
  size_t need = j->len + n + 1, capacity;
  char *data;

  if (j->failed)
    return false;
  if (need > j->limit) {
    j->failed = true;
    return false;
  }
  if (need <= j->capacity)
    return true;
  capacity = j->capacity ? j->capacity : 256;
  while (capacity < need)
    capacity *= 2;
  if (capacity > j->limit)
    capacity = j->limit;
  data = realloc (j->data, capacity);
  if (data == NULL) {
    j->failed = true;
    return false;
  }
  j->data = data;
  j->capacity = capacity;
  return true;
}

static void
put (struct json *j, const char *s, size_t n)
{
  if (make_room (j, n)) {
    memcpy (j->data + j->len, s, n);
    j->len += n;
    j->data[j->len] = '\0';
  }
}

/* The length of the valid UTF-8 sequence at S (at most N bytes), or 0.
 * Rejects overlong forms, surrogates and code points past U+10FFFF.
 */
static size_t
utf8_sequence (const unsigned char *s, size_t n)
{
  size_t len;
  unsigned long cp;

  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    len = 2, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    len = 3, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    len = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
      || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return len;
}

static void
put_escaped (struct json *j, const char *value, size_t n)
{
  const unsigned char *s = (const unsigned char *) value;
  char escape[8];

  put (j, "\"", 1);
  for (size_t i = 0; i < n; ) {
    size_t len = utf8_sequence (s + i, n - i);

    if (len == 0) {
      put (j, "\\ufffd", 6);
      len = 1;
    }
    else if (s[i] == '"' || s[i] == '\\') {
      escape[0] = '\\';
      escape[1] = s[i];
      put (j, escape, 2);
    }
    else if (s[i] == '\n')
      put (j, "\\n", 2);
    else if (s[i] == '\t')
      put (j, "\\t", 2);
    else if (s[i] < 0x20 || s[i] == 0x7f) {
      snprintf (escape, sizeof escape, "\\u%04x", s[i]);
      put (j, escape, 6);
    }
    else
      put (j, value + i, len);
    i += len;
  }
  put (j, "\"", 1);
}

/* The comma and the member name that go before every value. */
static void
begin_value (struct json *j, const char *key)
{
  if (j->depth > 0) {
    if (j->has_member[j->depth - 1])
      put (j, ",", 1);
    j->has_member[j->depth - 1] = true;
  }
  if (key) {
    put_escaped (j, key, strlen (key));
    put (j, ":", 1);
  }
}

static void
open_container (struct json *j, const char *key, const char *bracket)
{
  begin_value (j, key);
  if (j->depth == JSON_MAX_DEPTH) {
    j->failed = true;
    return;
  }
  put (j, bracket, 1);
  j->has_member[j->depth++] = false;
}

static void
close_container (struct json *j, const char *bracket)
{
  if (j->depth == 0) {
    j->failed = true;
    return;
  }
  j->depth--;
  put (j, bracket, 1);
}

void
json_object_begin (struct json *j, const char *key)
{
  open_container (j, key, "{");
}

void
json_object_end (struct json *j)
{
  close_container (j, "}");
}

void
json_array_begin (struct json *j, const char *key)
{
  open_container (j, key, "[");
}

void
json_array_end (struct json *j)
{
  close_container (j, "]");
}

void
json_string_len (struct json *j, const char *key, const char *value,
                 size_t len)
{
  begin_value (j, key);
  put_escaped (j, value, len);
}

void
json_string (struct json *j, const char *key, const char *value)
{
  json_string_len (j, key, value, strlen (value));
}

/* Writes a number already formatted by snprintf. */
static void
put_number (struct json *j, const char *key, const char *text, int n)
{
  begin_value (j, key);
  if (n > 0)
    put (j, text, n);
  else
    j->failed = true;
}

void
json_uint (struct json *j, const char *key, uint64_t value)
{
  char text[24];

  put_number (j, key, text,
              snprintf (text, sizeof text, "%llu", (unsigned long long) value));
}

void
json_int (struct json *j, const char *key, int64_t value)
{
  char text[24];

  put_number (j, key, text,
              snprintf (text, sizeof text, "%lld", (long long) value));
}

void
json_double (struct json *j, const char *key, double value)
{
  char text[32];

  if (!isfinite (value))
    put_number (j, key, "null", 4);
  else
    put_number (j, key, text, snprintf (text, sizeof text, "%.4f", value));
}

void
json_bool (struct json *j, const char *key, bool value)
{
  begin_value (j, key);
  put (j, value ? "true" : "false", value ? 4 : 5);
}

char *
json_finish (struct json *j, size_t *len)
{
  char *text;

  put (j, "\n", 1);
  if (j->failed || j->depth != 0) {
    json_free (j);
    return NULL;
  }
  text = j->data;
  *len = j->len;
  j->data = NULL;
  return text;
}
