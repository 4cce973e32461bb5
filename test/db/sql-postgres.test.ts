import { expect, test } from "bun:test";
import { toDollarPlaceholders } from "../../src/db/sql-postgres.ts";

test.each([
  ["SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = $1 AND b = $2"],
  ["INSERT INTO t VALUES (?, ?, ?)", "INSERT INTO t VALUES ($1, $2, $3)"],
  ["SELECT '?', 'it''s ?', ?", "SELECT '?', 'it''s ?', $1"],
  ['SELECT "a?b", "q""?" FROM t WHERE x = ?', 'SELECT "a?b", "q""?" FROM t WHERE x = $1'],
  ["SELECT ? -- what?\n, ?", "SELECT $1 -- what?\n, $2"],
  ["SELECT /* ? */ ?", "SELECT /* ? */ $1"],
  ["SELECT $$ ? $$, $tag$ ? $tag$, ?", "SELECT $$ ? $$, $tag$ ? $tag$, $1"],
  ["SELECT 1", "SELECT 1"],
  ["SELECT 'unterminated ?", "SELECT 'unterminated ?"],
])("%s", (query, expected) => {
  expect(toDollarPlaceholders(query)).toBe(expected);
});
