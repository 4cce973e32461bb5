import { migrate, openDatabase } from "../../src/db/database.ts";
import { IdempotencyStore } from "../../src/idempotency/idempotency.ts";
import { sqlOf } from "../helpers/sql.ts";

/** An idempotency store on a fresh in-memory database. */
export function store() {
  const db = openDatabase(":memory:");
  migrate(db);
  return { db, idem: new IdempotencyStore(sqlOf(db)) };
}

/** A POST request, with an Idempotency-Key header when `key` is given. */
export const post = (url: string, key?: string) =>
  new Request(url, { method: "POST", headers: key === undefined ? {} : { "idempotency-key": key } });
