/* cswap: the fuzz target for the control command parser and dispatcher.
 *
 * Any bytes, as one command line, against a real (small) store that holds
 * a few pages: control_execute() must return one line of JSON with a
 * boolean "ok", and must neither crash nor leak (the sanitizers' job).
 *
 * Built with libFuzzer when the compiler is clang; with gcc, fuzz-driver.c
 * supplies a main() that replays the seed corpus and random mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "control.h"
#include "page.h"
#include "store.h"

extern int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static struct control *
the_control (void)
{
  static struct control *control;
  struct store_config config = {
    .size_bytes = 4 * 1024 * 1024,
    .codec = { CODEC_LZ4, 0 },
  };
  unsigned char page[CSWAP_PAGE_SIZE];
  struct store *store;

  if (control)
    return control;
  store = store_create (&config);
  if (store == NULL || (control = control_create (store)) == NULL) {
    perror ("store_create");
    abort ();
  }
  /* Something for stats, classes and compact to see. */
  for (unsigned p = 0; p < 64; p++) {
    for (size_t i = 0; i < sizeof page; i++)
      page[i] = i % (p + 2) ? 'a' + p % 7 : (unsigned char) i;
    store_write (store, page, sizeof page, p * (uint64_t) CSWAP_PAGE_SIZE);
  }
  return control;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  size_t len;
  char *reply = control_execute (the_control (), (const char *) data, size,
                                 &len);
  json_tokener *tok;
  json_object *o, *ok;

  if (reply == NULL || len == 0 || strlen (reply) != len
      || memchr (reply, '\n', len) != reply + len - 1) {
    fprintf (stderr, "not one line: %s\n", reply ? reply : "(null)");
    abort ();
  }
  tok = json_tokener_new ();
  json_tokener_set_flags (tok, JSON_TOKENER_STRICT
                               | JSON_TOKENER_VALIDATE_UTF8);
  o = json_tokener_parse_ex (tok, reply, len - 1);
  if (o == NULL || !json_object_object_get_ex (o, "ok", &ok)
      || !json_object_is_type (ok, json_type_boolean)) {
    fprintf (stderr, "not a JSON reply: %s\n", reply);
    abort ();
  }
  json_object_put (o);
  json_tokener_free (tok);
  free (reply);
  return 0;
}
