#!/bin/bash
# cswap bench: sqlite3 building an in-memory database and querying it.
#
# usage: sqlite-queries.sh ROWS
#
# The sqlite3 shell builds a table of ROWS rows (about 600 bytes each,
# text and numbers made from the row number, so every run does the same
# work) in an in-memory database, indexes it, and runs aggregate, join
# and lookup queries over it.  It checks its own results: each query's
# answer is compared in SQL with the value the row formula gives, and the
# script exits 1 unless every check says ok.
set -uo pipefail
rows=${1:?usage: $0 ROWS}

out=$(sqlite3 :memory: <<SQL
PRAGMA cache_size = -1000000;
PRAGMA temp_store = MEMORY;
CREATE TABLE item (id INTEGER PRIMARY KEY, grp INTEGER, price INTEGER,
                   name TEXT, body TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO item
  SELECT i, i % 97, (i * 7919) % 10007,
         printf('item-%08d-%s', i, substr('abcdefghijklmnopqrstuvwxyz', 1 + i % 26)),
         printf('%.*c', 40 + i % 60, 'x') || ' ' || hex(i * 2654435761)
           || printf(' %0500d', i)
  FROM n;
CREATE INDEX item_grp ON item (grp, price);
CREATE TABLE grp_total AS
  SELECT grp, count(*) AS n, sum(price) AS total FROM item GROUP BY grp;
SELECT CASE WHEN (SELECT count(*) FROM item) = $rows THEN 'ok' ELSE 'bad count' END;
SELECT CASE WHEN (SELECT sum(n) FROM grp_total) = $rows THEN 'ok' ELSE 'bad groups' END;
SELECT CASE WHEN (SELECT sum(total) FROM grp_total) = (SELECT sum(price) FROM item)
            THEN 'ok' ELSE 'bad totals' END;
SELECT CASE WHEN (SELECT count(*) FROM item a JOIN grp_total g ON a.grp = g.grp
                  WHERE a.price > g.total / g.n) > 0 THEN 'ok' ELSE 'bad join' END;
SELECT CASE WHEN (SELECT count(*) FROM item
                  WHERE name = printf('item-%08d-%s', 4242, substr('abcdefghijklmnopqrstuvwxyz', 1 + 4242 % 26))) = ($rows >= 4242)
            THEN 'ok' ELSE 'bad lookup' END;
SELECT CASE WHEN (SELECT sum(length(body)) FROM item) > 500 * $rows
            THEN 'ok' ELSE 'bad bodies' END;
SQL
) || { echo "sqlite-queries: sqlite3 failed"; exit 1; }
if [[ $(grep -c '^ok$' <<<"$out") -eq 6 && $(wc -l <<<"$out") -eq 6 ]]; then
  echo "sqlite-queries: $rows rows, 6 checks ok"
  exit 0
fi
echo "sqlite-queries: failed checks: $(grep -v '^ok$' <<<"$out" | tr '\n' ' ')"
exit 1
