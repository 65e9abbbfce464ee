/* cswap: the drop-ins of a configuration file (see config-dropins.h).
 *
 * Each directory is listed with scandir(), filtered to *.conf and sorted
 * with strcmp() (lexical order, whatever the locale); the two sorted
 * lists are then merged, a name in both taking the administrator's file
 * and noting the vendor's as hidden.
 *
 * Locking: none; called once, single-threaded, before any thread starts.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "config-dropins.h"

static char why_buffer[PATH_MAX + 64];

static int
is_dropin_name (const struct dirent *entry)
{
  size_t len = strlen (entry->d_name);

  return entry->d_name[0] != '.' && len > strlen (".conf")
         && strcmp (entry->d_name + len - strlen (".conf"), ".conf") == 0;
}

static int
compare_names (const struct dirent **a, const struct dirent **b)
{
  return strcmp ((*a)->d_name, (*b)->d_name);
}

/* The drop-in names in DIR, sorted: none if DIR does not exist. */
static int
list_names (const char *dir, struct dirent ***names, int *count,
            const char **why)
{
  *count = scandir (dir, names, is_dropin_name, compare_names);
  if (*count >= 0)
    return 0;
  *count = 0;
  *names = NULL;
  if (errno == ENOENT || errno == ENOTDIR)
    return 0;
  snprintf (why_buffer, sizeof why_buffer, "%s: %s", dir, strerror (errno));
  *why = why_buffer;
  return -1;
}

static void
free_names (struct dirent **names, int count)
{
  for (int i = 0; i < count; i++)
    free (names[i]);
  free (names);
}

/* The systemd convention for masking: a link to /dev/null. */
static bool
is_dev_null (const char *path)
{
  struct stat st;

  return stat (path, &st) == 0 && S_ISCHR (st.st_mode)
         && st.st_rdev == makedev (1, 3);
}

/* Appends DIR/NAME; HIDDEN_DIR, if not NULL, holds a file of the same name
 * that DIR/NAME replaces.
 */
static int
append (struct config_dropins *dropins, const char *dir, const char *name,
        const char *hidden_dir, const char **why)
{
  struct config_dropin *item = &dropins->items[dropins->count++];

  /* asprintf() leaves its pointer undefined when it fails. */
  if (asprintf (&item->path, "%s/%s", dir, name) == -1)
    item->path = NULL;
  if (hidden_dir && asprintf (&item->hidden, "%s/%s", hidden_dir, name) == -1)
    item->hidden = NULL;
  if (item->path == NULL || (hidden_dir && item->hidden == NULL)) {
    *why = "out of memory";
    return -1;
  }
  item->masked = is_dev_null (item->path);
  return 0;
}

static int
merge (struct config_dropins *dropins,
       const char *admin_dir, struct dirent **admin, int admin_count,
       const char *vendor_dir, struct dirent **vendor, int vendor_count,
       const char **why)
{
  int i = 0, j = 0, r = 0;

  dropins->items = calloc (admin_count + vendor_count + 1,
                           sizeof *dropins->items);
  if (dropins->items == NULL) {
    *why = "out of memory";
    return -1;
  }
  while (r == 0 && (i < admin_count || j < vendor_count)) {
    int order = i == admin_count ? 1
                : j == vendor_count ? -1
                : strcmp (admin[i]->d_name, vendor[j]->d_name);

    if (order <= 0)
      r = append (dropins, admin_dir, admin[i++]->d_name,
                  order == 0 ? vendor_dir : NULL, why);
    else
      r = append (dropins, vendor_dir, vendor[j]->d_name, NULL, why);
    if (order >= 0)
      j++;
  }
  return r;
}

int
config_dropins_list (const char *config_path, struct config_dropins *dropins,
                     const char **why)
{
  const char *vendor_base = getenv ("CSWAP_VENDOR_CONFIG_DIR");
  char admin_dir[PATH_MAX], vendor_dir[PATH_MAX];
  struct dirent **admin = NULL, **vendor = NULL;
  int admin_count = 0, vendor_count = 0, r = -1;

  *dropins = (struct config_dropins) { 0 };
  if (vendor_base == NULL || *vendor_base == '\0')
    vendor_base = CONFIG_VENDOR_DIR;
  if ((size_t) snprintf (admin_dir, sizeof admin_dir, "%s.d", config_path)
      >= sizeof admin_dir
      || (size_t) snprintf (vendor_dir, sizeof vendor_dir, "%s/%s.d",
                            vendor_base, basename (config_path))
         >= sizeof vendor_dir) {
    snprintf (why_buffer, sizeof why_buffer, "%s: path too long", config_path);
    *why = why_buffer;
    return -1;
  }
  if (list_names (admin_dir, &admin, &admin_count, why) == 0
      && list_names (vendor_dir, &vendor, &vendor_count, why) == 0)
    r = merge (dropins, admin_dir, admin, admin_count,
               vendor_dir, vendor, vendor_count, why);
  free_names (admin, admin_count);
  free_names (vendor, vendor_count);
  return r;
}

void
config_dropins_free (struct config_dropins *dropins)
{
  for (size_t i = 0; i < dropins->count; i++) {
    free (dropins->items[i].path);
    free (dropins->items[i].hidden);
  }
  free (dropins->items);
  *dropins = (struct config_dropins) { 0 };
}
