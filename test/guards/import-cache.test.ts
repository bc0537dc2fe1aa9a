// The page cache of `rolodex import`'s SQLite connection is bounded (docs/import.md §Memory): an
// atomic import's one transaction keeps the pages it writes in the cache until the cache is full,
// so the bound, not the import's size, is what the cache holds at most.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/database.ts';
import { useBulkCache } from '../../src/db/index.ts';
import { createTestDb } from '../helpers/db.ts';

/** At most this much of the import's memory, in KiB, is SQLite's page cache. */
const BOUND_KIB = 16_384;

test("rolodex import's SQLite connection caches at most 16 MiB of pages", async () => {
  const tdb = await createTestDb('sqlite');
  const db = openDb({ dataDir: tdb.dataDir, sqliteFile: tdb.sqliteFile, writerThread: true });
  try {
    await useBulkCache(db.kysely);
    const { rows } = await sql<{ cache_size: number; page_size: number }>`select * from pragma_cache_size, pragma_page_size`.execute(db.kysely);
    const { cache_size: size, page_size: pageSize } = rows[0]!;
    // A negative cache_size is KiB, a positive one pages.
    const kib = size < 0 ? -size : (size * pageSize) / 1024;
    assert.ok(kib <= BOUND_KIB, `the import's page cache is ${kib} KiB`);
  } finally {
    await db.close();
    await tdb.drop();
  }
});
