/* cswap: a json-c tokener as strict as this json-c allows, for the tests
 * that check that the control socket's replies are JSON (test-command.c,
 * fuzz-command.c).
 *
 * It sets JSON_TOKENER_STRICT (no trailing commas, no single quotes, no
 * control characters in strings) and JSON_TOKENER_VALIDATE_UTF8, except
 * where strict mode rejects valid UTF-8: json-c 0.18 (Debian 13's)
 * refuses, in strict mode, every string holding a byte past 0x7f (json-c
 * issues #875 and #892), so a reply that quotes a non-ASCII command back
 * was taken for broken JSON.  There the UTF-8 check alone is kept.  It is
 * found by parsing a probe, not by version, so that a json-c with the fix
 * gets strict mode back.
 */
#ifndef CSWAP_TESTS_STRICT_JSON_H
#define CSWAP_TESTS_STRICT_JSON_H

#include <json-c/json.h>

/* A new tokener (json_tokener_free() it), or NULL if out of memory. */
static inline json_tokener *
strict_json_tokener_new (void)
{
  static int flags = -1;
  json_tokener *tok = json_tokener_new ();

  if (tok == NULL)
    return NULL;
  if (flags == -1) {
    static const char probe[] = "\"caf\xc3\xa9\"";   /* "café" */
    json_object *o;

    json_tokener_set_flags (tok, JSON_TOKENER_STRICT
                                 | JSON_TOKENER_VALIDATE_UTF8);
    o = json_tokener_parse_ex (tok, probe, sizeof probe - 1);
    flags = o ? JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8
              : JSON_TOKENER_VALIDATE_UTF8;
    json_object_put (o);
    json_tokener_reset (tok);
  }
  json_tokener_set_flags (tok, flags);
  return tok;
}

#endif
