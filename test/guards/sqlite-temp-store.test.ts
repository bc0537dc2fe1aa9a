// A serving process's SQLite writing connection keeps temporary tables in memory, set once the
// migrations have run; the CLI's connections (migrations, imports, purges) spill to a file, except
// `rolodex trash restore`'s, which keeps its statement journals in memory as the server does
// (docs/performance.md §Temporary tables of a serving SQLite connection).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { restoreEach } from '../../src/cli/trash.ts';
import { loadConfig } from '../../src/config.ts';
import { type Db, write } from '../../src/db/index.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { createRecord, RECORD_TYPES } from '../../src/records/service.ts';
import { openDatabase } from '../../src/runtime.ts';
import { closeDeps, openDeps } from '../../src/server-deps.ts';
import { trashRecord } from '../../src/trash/service.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';

const tempStore = async (db: Db) => Number((await sql<{ temp_store: number }>`pragma temp_store`.execute(db.kysely)).rows[0]?.temp_store);

test('the server keeps temporary tables in memory; the CLI does not, but for its restores', async () => {
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
      const ws = await createWorkspace(systemCtx(cli.kysely), { name: 'Temp store' });
      const id = await write(cli.kysely, async (tx) => {
        const op = operatorCtx(tx, ws.id);
        const contact = await createRecord(op, { type: RECORD_TYPES.contact, fields: { $email: ['a@temp-store.test'] } });
        await trashRecord(op, RECORD_TYPES.contact, { id: contact.id });
        return contact.id;
      });
      const io = { out: () => {}, err: (s: string) => assert.fail(s), env: {}, isTty: false };
      const done = await restoreEach(cli, config, ws.id, [id], io, () => {});
      assert.deepEqual(
        done.map((r) => r.id),
        [id],
      );
      assert.equal(await tempStore(cli), 2, "MEMORY on the handle of `rolodex trash restore`: a restore's journals stay off the disk");
    } finally {
      await cli.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
