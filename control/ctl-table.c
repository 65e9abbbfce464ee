/* cswapctl: tables, as zramctl prints them.
 *
 * Cells are kept as strings until the table is printed, so that each
 * column gets the width of its widest cell (the header's too, unless it
 * is left out).  Raw
 * output, for scripts, puts one space between cells and escapes what
 * would split or break a cell (whitespace, control bytes, backslash) as
 * \xNN, as libsmartcols does for zramctl --raw.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cswapctl.h"

void
table_init (struct table *t, const struct table_column *columns,
            size_t column_count)
{
  *t = (struct table) { .columns = columns, .column_count = column_count };
}

void
table_cell (struct table *t, const char *fmt, ...)
{
  va_list ap;

  if (t->cell_count == t->capacity) {
    t->capacity = t->capacity ? 2 * t->capacity : 64;
    t->cells = realloc (t->cells, t->capacity * sizeof *t->cells);
    if (t->cells == NULL)
      die (EXIT_FAILURE, "realloc: %m");
  }
  va_start (ap, fmt);
  if (vasprintf (&t->cells[t->cell_count], fmt, ap) == -1)
    die (EXIT_FAILURE, "vasprintf: %m");
  va_end (ap);
  t->cell_count++;
}

static void
print_raw_cell (const char *cell)
{
  for (const unsigned char *p = (const unsigned char *) cell; *p; p++)
    if (*p <= ' ' || *p == '\\' || *p == 0x7f)
      printf ("\\x%02x", *p);
    else
      putchar (*p);
}

/* Row R's cell C: row 0 is the headers. */
static const char *
row_cell (const struct table *t, size_t r, size_t c)
{
  return r == 0 ? t->columns[c].header : t->cells[(r - 1) * t->column_count + c];
}

void
table_print (struct table *t, const struct table_style *style)
{
  size_t rows = 1 + t->cell_count / t->column_count;
  size_t *width = calloc (t->column_count, sizeof *width);

  if (width == NULL)
    die (EXIT_FAILURE, "calloc: %m");
  for (size_t r = style->no_headings ? 1 : 0; r < rows; r++)
    for (size_t c = 0; c < t->column_count; c++)
      if (strlen (row_cell (t, r, c)) > width[c])
        width[c] = strlen (row_cell (t, r, c));
  for (size_t r = style->no_headings ? 1 : 0; r < rows; r++)
    for (size_t c = 0; c < t->column_count; c++) {
      const char *cell = row_cell (t, r, c);
      bool last = c + 1 == t->column_count;

      if (c > 0)
        putchar (' ');
      if (style->raw)
        print_raw_cell (cell);
      else if (t->columns[c].left && last)
        fputs (cell, stdout);   /* no trailing blanks */
      else
        printf ("%*s", t->columns[c].left ? -(int) width[c] : (int) width[c],
                cell);
      if (last)
        putchar ('\n');
    }
  for (size_t i = 0; i < t->cell_count; i++)
    free (t->cells[i]);
  free (t->cells);
  free (width);
}
