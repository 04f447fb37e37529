// The database of the paged-restore benchmark: a shop's `orders` table,
// one row per order, with an index by customer — a table a server looks
// rows up in by primary key and by customer. It owns the schema, how a
// database of a given size is built, and the few commits made after the
// first upload. It never replicates or restores anything itself.
//
// A row is about 230 bytes in its page, partly compressible: a JSON list
// of two line items, an e-mail address and a street address repeat words
// from small vocabularies (LZ4 finds them), a payment token is 32 random
// bytes (it finds nothing). Orders are appended in id order with
// increasing times; customers are random, so the index grows everywhere.

/** The table and its index. */
export const SCHEMA = `
  CREATE TABLE orders(
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    status TEXT NOT NULL,
    email TEXT NOT NULL,
    shipping_address TEXT NOT NULL,
    items TEXT NOT NULL,
    payment_token BLOB NOT NULL
  );
  CREATE INDEX orders_customer ON orders(customer_id, created_at);
`;

/** Distinct customers: a few orders each at 16 MiB, dozens at 1 GiB. */
const CUSTOMERS = 200_000;
/** Orders inserted per statement: one transaction stays a few tens of MB. */
const ROWS_PER_STATEMENT = 200_000;
/** Bytes a row takes in the table and the index, to size the last batch. */
const BYTES_PER_ROW = 230;

// Appends `?1` orders after the `?2` already there, in one statement.
const INSERT_ORDERS = `
  WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?1),
  r AS (SELECT i, abs(random()) % ${CUSTOMERS} + 1 AS c FROM k)
  INSERT INTO orders(customer_id, created_at, status, email, shipping_address, items, payment_token)
  SELECT
    c,
    1700000000000 + (?2 + i) * 7000 + abs(random()) % 7000,
    '["delivered","delivered","delivered","delivered","shipped","shipped","paid","pending","cancelled","refunded"]' ->> (abs(random()) % 10),
    printf('customer%d@example.com', c),
    printf('%d %s %s, %s %05d', 1 + abs(random()) % 9999,
      '["Oak","Elm","Pine","Maple","Cedar","Birch","Willow","Ash","Spruce","Juniper"]' ->> (abs(random()) % 10),
      '["Street","Avenue","Road","Lane","Drive","Court"]' ->> (abs(random()) % 6),
      '["Springfield","Riverton","Lakeside","Fairview","Greenville","Madison","Georgetown","Salem"]' ->> (abs(random()) % 8),
      abs(random()) % 100000),
    json_array(
      json_object('sku', printf('SKU-%06d', abs(random()) % 100000), 'qty', 1 + abs(random()) % 3, 'price', (abs(random()) % 20000) / 100.0),
      json_object('sku', printf('SKU-%06d', abs(random()) % 100000), 'qty', 1 + abs(random()) % 3, 'price', (abs(random()) % 20000) / 100.0)),
    randomblob(32)
  FROM r`;

/**
 * Builds the database at `file` (which must not exist) until it is at
 * least `bytes` long, with `Database` (offloop's API). Resolves to
 * `{ rows, bytes, pageSize }`.
 */
export async function buildOrders(Database, file, bytes) {
  // Built as fast as SQLite goes: no journal to sync, a cache that holds
  // the index's hot pages.
  const db = await Database.open(file, { journalMode: 'delete', synchronous: 'off', readers: 0, checkpoint: false, cacheSize: -262_144 });
  try {
    await db.exec(SCHEMA);
    const insert = db.prepare(INSERT_ORDERS);
    const size = db.prepare('SELECT page_count * page_size AS n, page_size AS pageSize FROM pragma_page_count(), pragma_page_size()');
    let rows = 0;
    let now = await size.get();
    while (now.n < bytes) {
      const batch = Math.min(ROWS_PER_STATEMENT, Math.ceil((bytes - now.n) / BYTES_PER_ROW) + 1);
      await insert.run(batch, rows);
      rows += batch;
      now = await size.get();
    }
    return { rows, bytes: now.n, pageSize: now.pageSize };
  } finally {
    await db.close();
  }
}

/**
 * One later commit on an open replicating database: `count` random
 * orders refunded. Each such commit, synced, is one L0 file after the
 * snapshot.
 */
export async function refundSome(db, rows, count) {
  await db
    .prepare(
      `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
       UPDATE orders SET status = 'refunded' WHERE id IN (SELECT abs(random()) % ? + 1 FROM k)`,
    )
    .run(count, rows);
}

/** The statement of the first response: one order by primary key. */
export const ORDER_BY_ID = 'SELECT * FROM orders WHERE id = ?';
