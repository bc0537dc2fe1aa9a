// A serving process's SQLite writing connection keeps temporary tables in memory, set once the
// migrations have run; the CLI's connections (migrations, imports, purges) spill to a file
// (docs/performance.md §Temporary tables of a serving SQLite connection).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/index.ts';
import { openDatabase } from '../../src/runtime.ts';
import { closeDeps, openDeps } from '../../src/server-deps.ts';

const tempStore = async (db: Db) => Number((await sql<{ temp_store: number }>`pragma temp_store`.execute(db.kysely)).rows[0]?.temp_store);

test('the server keeps temporary tables in memory; the CLI does not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-temp-store-'));
  try {
    const config = loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1' });
    const deps = await openDeps(config, pino({ level: 'silent' }));
    try {
      assert.equal(await tempStore(deps.db), 2, 'MEMORY on the serving handle');
    } finally {
      await closeDeps(deps);
    }
    const cli = await openDatabase(config);
    try {
      assert.equal(await tempStore(cli), 0, 'the default (a file past the cache) on a command handle');
    } finally {
      await cli.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
