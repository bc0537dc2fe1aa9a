// `rolodex export` beside writes (docs/import.md §One state of the workspace): every line
// is read from one snapshot taken before the first, so the file holds every object the workspace
// held when the export began and none written while it ran, and every reference of a line names
// an object of the file. Here the writes run while the export writes its lines: between two pages
// of contacts (one of them drawn its id a millisecond before the page's last contact, so its id is
// lower, where a read of the next page by `id > last` would not find it), and once the accounts
// are written (an account added to a list).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { exportLines, type Write } from '../../src/cli/export.ts';
import type { Io } from '../../src/cli/io.ts';
import { write } from '../../src/db/index.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createRecord, RECORD_TYPES } from '../../src/records/service.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

type Line = { object: string; externalId: string; members?: string[] };

/** Exports the workspace as the CLI does, calling `during` with each line before it is written. */
async function exported(t: TestApp, workspaceId: string, during: (line: Line) => Promise<void>): Promise<Line[]> {
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  const err: string[] = [];
  const io: Io = { out: () => {}, err: (s) => err.push(s), env, isTty: false };
  const lines: Line[] = [];
  const onLine: Write = async (line) => {
    await during(line as Line);
    lines.push(line as Line);
  };
  await exportLines(io, { workspaceId, wanted: undefined, trash: false, files: undefined }, onLine);
  assert.deepEqual(err, []);
  return lines;
}

const contact = (externalId: string) => ({ object: 'contact', externalId, fields: { $name: { value: { firstName: externalId }, valueType: 'FULL_NAME' } } });

async function seed(t: TestApp, workspaceId: string, objects: object[]): Promise<void> {
  await runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: objects.map((o) => JSON.stringify(o)).join('\n') });
}

/** The millisecond an id was drawn in: its first 10 characters after the kind, in Crockford base32. */
function idTime(id: string): number {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  return [...(id.split('_')[1] ?? '').slice(0, 10)].reduce((ms, c) => ms * 32 + alphabet.indexOf(c), 0);
}

/** A contact created through the service as if at `now`: its id is drawn in that millisecond. */
async function createContact(t: TestApp, workspaceId: string, now: number): Promise<string> {
  const created = await write(t.deps.db.kysely, (tx) =>
    createRecord(operatorCtx(tx, workspaceId, { now }), { type: RECORD_TYPES.contact, fields: { $name: { firstName: 'Late' } } }),
  );
  return created.id;
}

eachDialect('rolodex export beside writes', (ctx) => {
  test('holds every contact there was when it began, and none created while it ran, whatever their ids', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    // More than a page of contacts (500, src/records/export.ts).
    const seeded = Array.from({ length: 520 }, (_, i) => `c-${String(i).padStart(3, '0')}`);
    await seed(t, ws, seeded.map(contact));
    const ids = await t.deps.db.kysely.selectFrom('records').select('id').where('workspace_id', '=', ws).where('kind', '=', 'contact').orderBy('id').execute();
    const boundary = ids[499]?.id as string;

    const created: string[] = [];
    let contacts = 0;
    let lower = '';
    const lines = await exported(t, ws, async (line) => {
      if (line.object !== 'contact' || ++contacts !== 500) return;
      // The first page is read: a contact whose request drew its id a millisecond before the
      // page's last contact's (ids sort by that millisecond first), and one drawn now.
      lower = await createContact(t, ws, idTime(boundary) - 1);
      created.push(lower, await createContact(t, ws, Date.now()));
    });
    assert.ok(lower < boundary, `the late contact ${lower} sorts below the first page's last, ${boundary}`);
    const names = lines.filter((l) => l.object === 'contact').map((l) => l.externalId);
    const late = created.filter((id) => names.includes(id));
    assert.deepEqual(late, [], `no contact created during the export is written (one of them, ${lower}, below the first page's last)`);
    assert.deepEqual(names.toSorted(), seeded);
  });
  test('a list member added while it ran, once its record type was written, is not named: the file imports', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const account = (externalId: string) => ({ object: 'account', externalId, fields: { $name: { value: externalId, valueType: 'TEXT' } } });
    const list = (members: string[]) => ({ object: 'list', externalId: 'l-1', name: 'Targets', objectType: 'account', members });
    await seed(t, ws, [account('a1'), account('a2'), contact('c1'), list(['a1', 'a2'])]);
    let added = false;
    const lines = await exported(t, ws, async (line) => {
      if (line.object !== 'contact' || added) return;
      added = true;
      // The accounts are written: one more, and the list holds it too.
      await seed(t, ws, [account('a3'), list(['a1', 'a2', 'a3'])]);
    });
    const b = await seedWorkspace(t);
    const path = join(t.tdb.dataDir, 'snapshot.ndjson');
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n'));
    const r = await rolodex(t, ['import', '--workspace', b.workspaceId, path, '--json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(
      lines.filter((l) => l.object === 'account' || l.object === 'list').map((l) => [l.object, l.externalId, l.members]),
      [
        ['account', 'a1', undefined],
        ['account', 'a2', undefined],
        ['list', 'l-1', ['a1', 'a2']],
      ],
    );
    const lists = (await call(t, b.secret, 'GET', '/v1/lists?limit=25')).json().data as { id: string }[];
    const members = (await call(t, b.secret, 'GET', `/v1/lists/${lists[0]?.id}/accounts?limit=25`)).json().data as { externalId: string }[];
    assert.deepEqual(members.map((m) => m.externalId).toSorted(), ['a1', 'a2']);
  });
});
