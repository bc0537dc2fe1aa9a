// A SQLite connection's cache of prepared statements (src/db/sqlite/cached.ts) is bounded, and
// the import's writer thread frees the statements it evicts, not only drops them: node:sqlite
// frees a statement when V8 collects its object, so the cache runs a full collection after every
// EVICTIONS_PER_COLLECTION evictions (docs/import.md §Memory). Without it, a batched import, whose
// chunks' statements come in many texts, held each evicted one until its thread's next full
// collection.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { CachedDatabase, EVICTIONS_PER_COLLECTION, STATEMENT_CACHE } from '../../src/db/sqlite/cached.ts';

test('the statement cache collects its evicted statements every EVICTIONS_PER_COLLECTION evictions', () => {
  let collections = 0;
  const db = new CachedDatabase(new DatabaseSync(':memory:'), { collect: () => collections++ });
  try {
    for (let i = 0; i < STATEMENT_CACHE; i++) db.prepare(`select ${i}`);
    assert.equal(collections, 0, 'nothing is evicted while the cache has room');
    // The same texts again are found in the cache: no eviction.
    for (let i = 0; i < STATEMENT_CACHE; i++) db.prepare(`select ${i}`);
    assert.equal(collections, 0);
    for (let i = 0; i < 2 * EVICTIONS_PER_COLLECTION; i++) db.prepare(`select 'new', ${i}`);
    assert.equal(collections, 2);
  } finally {
    db.close();
  }
});
