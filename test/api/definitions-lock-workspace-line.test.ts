// An import whose workspace line sets the default country, beside a definition write under way
// (docs/records.md §Definitions), on PostgreSQL: the default country is part of the definitions
// (their version moves with it), so setting it takes the workspace's definitions lock before it
// writes. The import then waits for the definition write at its first step and runs once that
// committed; neither is cancelled as a deadlock. (SQLite has one writer: nothing overlaps.)
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { lockDefinitions } from '../../src/definitions/repository.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { asksFor } from '../helpers/pg-locks.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`an import's workspace line beside a definition write [${dialect}]`, () => {
    test('the import waits for the definition write, then both commit', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const path = join(t.tdb.dataDir, `ws-line-${s.workspaceId}.ndjson`);
        const lines = [
          { object: 'workspace', defaultCountry: 'DE' },
          { object: 'account', externalId: 'a-1', fields: { $name: { value: 'A' } } },
        ];
        writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n'));
        let run: ReturnType<typeof rolodex> | undefined;
        await write(t.deps.db.kysely, async (tx) => {
          // A definition write under way: it holds the definitions lock, and has yet to write.
          await lockDefinitions(tx, s.workspaceId);
          run = rolodex(t, ['import', '--workspace', s.workspaceId, path, '--commit', 'atomic', '--json']);
          assert.ok(await asksFor(tx, `definitions/${s.workspaceId}`), 'the import waits for the definition write');
          // Its write moves the definitions' version (a trigger of migration 0017).
          await addField({ ...operatorCtx(tx, s.workspaceId), db: tx }, { objectType: 'account', key: 'code', label: 'Code', valueType: 'TEXT' });
          await sql`select 1`.execute(tx);
        });
        const done = await run!;
        assert.equal(done.code, 0, done.err);
        const listed = await call(t, s.secret, 'GET', '/v1/accounts');
        assert.ok(
          (listed.json().data as { fields: { $name: { value: string } } }[]).some((a) => a.fields.$name.value === 'A'),
          listed.body,
        );
        const row = await t.deps.db.kysely.selectFrom('workspaces').select('default_country').where('id', '=', s.workspaceId).executeTakeFirst();
        assert.equal(row?.default_country, 'DE');
      } finally {
        await t.close();
      }
    });
  });
