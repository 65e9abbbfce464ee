/* cswap: the fuzz target for the control command parser and dispatcher.
 *
 * Any bytes, as one command line, against a real (small) store that holds
 * a few pages and has a backing file, so that the tier's settings and
 * writeback run too: control_execute() must return one line of JSON with
 * a boolean "ok", must leave every setting within the store's bounds, and
 * must neither crash nor leak (the sanitizers' job).  The corpus puts
 * every number a command takes at and around each integer type's limit
 * (tests/lib/limit-corpus.sh).
 *
 * The backing file goes under $CSWAP_TIER_DIR or /var/tmp (O_DIRECT), and
 * is unlinked once open: the store keeps its descriptor.
 *
 * Built with libFuzzer when the compiler is clang; with gcc, fuzz-driver.c
 * supplies a main() that replays the seed corpus and random mutations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "control.h"
#include "page.h"
#include "store.h"
#include "strict-json.h"

extern int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static struct store *store;

static struct control *
the_control (void)
{
  static struct control *control;
  const char *dir = getenv ("CSWAP_TIER_DIR");
  char backing[256];
  struct store_config config = {
    .size_bytes = 4 * 1024 * 1024,
    .codec = { CODEC_LZ4, 0 },
    .backing_path = backing,
    .backing_size_bytes = 4 * 1024 * 1024,
  };
  unsigned char page[CSWAP_PAGE_SIZE];

  if (control)
    return control;
  snprintf (backing, sizeof backing, "%s/cswap-fuzz-command.%d",
            dir ? dir : "/var/tmp", (int) getpid ());
  store = store_create (&config);
  unlink (backing);
  if (store == NULL || (control = control_create (store)) == NULL) {
    fprintf (stderr, "store_create: %s\n", store_create_error ());
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

/* What any command must leave: every setting within the store's bounds. */
static void
check_settings (void)
{
  struct store_writeback_budget budget;
  struct store_recompress recompress;
  struct store_stats s;

  store_stats (store, &s);
  store_get_writeback_budget (store, &budget);
  store_get_recompress (store, &recompress);
  if ((s.pool_limit_bytes && s.pool_limit_bytes < STORE_MIN_POOL_LIMIT_BYTES)
      || (budget.limit_bytes_per_day
          && budget.limit_bytes_per_day < STORE_MIN_WRITEBACK_BUDGET_BYTES)
      || budget.limit_bytes_per_day > STORE_MAX_WRITEBACK_BUDGET_BYTES
      || (budget.burst_bytes
          && budget.burst_bytes < STORE_MIN_WRITEBACK_BUDGET_BYTES)
      || budget.burst_bytes > STORE_MAX_WRITEBACK_BUDGET_BYTES
      || store_get_idle_writeback (store) > STORE_MAX_IDLE_WRITEBACK_S
      || recompress.after_s < 1
      || recompress.after_s > STORE_MAX_COLD_AFTER_S
      || (recompress.enabled && recompress.cold.id >= CODEC_COUNT)
      || store_get_accept_threshold (store) > 100
      || store_get_writeback_batch (store) > STORE_MAX_WRITEBACK_BATCH) {
    fprintf (stderr, "a setting out of bounds: pool-limit %llu, "
             "idle-writeback %u\n", (unsigned long long) s.pool_limit_bytes,
             store_get_idle_writeback (store));
    abort ();
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  size_t len;
  char *reply = control_execute (the_control (), CONTROL_ACCESS_ALL,
                                 (const char *) data, size,
                                 &len);
  json_tokener *tok;
  json_object *o, *ok;

  if (reply == NULL || len == 0 || strlen (reply) != len
      || memchr (reply, '\n', len) != reply + len - 1) {
    fprintf (stderr, "not one line: %s\n", reply ? reply : "(null)");
    abort ();
  }
  tok = strict_json_tokener_new ();
  o = json_tokener_parse_ex (tok, reply, len - 1);
  if (o == NULL || !json_object_object_get_ex (o, "ok", &ok)
      || !json_object_is_type (ok, json_type_boolean)) {
    fprintf (stderr, "not a JSON reply: %s\n", reply);
    abort ();
  }
  json_object_put (o);
  json_tokener_free (tok);
  free (reply);
  check_settings ();
  return 0;
}
