// `rolodex import` of records (docs/design.md §Import format): any order, references by externalId,
// upsert, all-or-nothing with errors naming line and field, both file formats, the CLI's --json
// summary.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { main } from '../../src/cli/main.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { ImportFailed, runImport } from '../../src/import/run.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { createTestDb } from '../helpers/db.ts';
import { STATISTICS_FLOOR } from '../../src/db/statistics.ts';
import { importObjects, sleep } from '../helpers/lists-fixtures.ts';
import { operatorCtx } from '../../src/lib/context.ts';

const ndjson = (objects: unknown[]) => objects.map((o) => JSON.stringify(o)).join('\n');

async function failure(t: TestApp, workspaceId: string, text: string): Promise<ImportFailed> {
  try {
    await runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: text });
  } catch (err) {
    if (err instanceof ImportFailed) return err;
    throw err;
  }
  assert.fail('the import should have failed');
}

async function count(t: TestApp, workspaceId: string): Promise<number> {
  const r = await t.deps.db.kysely
    .selectFrom('records')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const SAMPLE = [
  // An opportunity first: it references an account and contacts that come later in the file.
  {
    object: 'opportunity',
    externalId: 'o1',
    fields: {
      $name: { value: 'Big deal', valueType: 'TEXT' },
      $stage: { value: 'Proposal', valueType: 'SINGLE_SELECT' },
      $opportunityStatus: { value: 'open' },
    },
    relationships: {
      $account: { objectType: 'account', values: ['a1'] },
      $champion: { objectType: 'contact', values: ['c2'] },
      $owner: { objectType: 'member', values: ['u1'] },
    },
  },
  {
    object: 'contact',
    externalId: 'c1',
    fields: {
      $name: { value: { firstName: 'Ann', lastName: 'Lee' }, valueType: 'FULL_NAME' },
      $email: { value: ['ann@acme.test'], valueType: 'EMAIL' },
    },
    relationships: { $account: { objectType: 'account', values: ['a1'] } },
  },
  {
    object: 'contact',
    externalId: 'c2',
    fields: { $name: { value: { firstName: 'Bo' }, valueType: 'FULL_NAME' } },
  },
  {
    object: 'account',
    externalId: 'a1',
    fields: { $name: { value: 'Acme', valueType: 'TEXT' }, $primaryAddress: { value: { city: 'Berlin', country: 'de' }, valueType: 'ADDRESS' } },
  },
  { object: 'user', externalId: 'u1', email: 'owner@acme.test', name: 'Owner', role: 'member' },
];

eachDialect('import records', (ctx) => {
  test('objects in any order, references by externalId, stored with the entity shape', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const r = await importObjects(t, s.workspaceId, SAMPLE);
    assert.deepEqual(r.counts, { user: 1, account: 1, contact: 2, opportunity: 1 });
    const { a1 } = r.ids.account as Record<string, string>;
    const { c1, c2 } = r.ids.contact as Record<string, string>;
    const o1 = r.ids.opportunity?.o1 as string;
    assert.match(o1, /^opp_/);
    assert.match(a1 as string, /^acc_/);
    const list = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'o', $objectType: 'opportunity' }, relationships: { $opportunities: [o1] } })
    ).json();
    const opp = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/opportunities`)).json().data[0];
    assert.equal(opp.externalId, 'o1');
    assert.match(opp.fields.$stage.value, /^opt_/, 'a select label is stored as its option id');
    assert.deepEqual(opp.fields.$opportunityStatus, { value: 'open', valueType: 'TEXT' }, 'import may set read-only fields');
    assert.deepEqual(opp.relationships.$owner, { cardinality: 'has_one', objectType: 'member', values: [r.ids.user?.u1] });
    assert.deepEqual(opp.relationships.$account, { cardinality: 'has_one', objectType: 'account', values: [a1] });
    assert.deepEqual(opp.relationships.$champion, { cardinality: 'has_one', objectType: 'contact', values: [c2] });
    assert.deepEqual(opp.relationships.$files, { cardinality: 'has_many', objectType: 'file', values: [] });
    // Imported records are listed, counted and indexed like created ones.
    const contacts = (await call(t, s.secret, 'GET', '/v1/contacts')).json();
    assert.equal(contacts.totalCount, 2);
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/contacts/${c1}`)).json().relationships.$account.values, [a1]);
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/accounts/${a1}`)).json().relationships.$contact.values, [c1]);
    assert.deepEqual((await call(t, s.secret, 'GET', `/v1/accounts/${a1}`)).json().relationships.$opportunity.values, [o1]);
    const accounts = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'a', $objectType: 'account' }, relationships: { $accounts: a1 } })
    ).json();
    const acc = (await call(t, s.secret, 'GET', `/v1/lists/${accounts.id}/accounts`)).json().data[0];
    assert.deepEqual(acc.fields.$primaryAddress, { value: { city: 'Berlin', country: 'DE' }, valueType: 'ADDRESS' });
  });

  test('re-importing the same externalIds updates in place: same ids, fields and relationships replaced', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const first = await importObjects(t, s.workspaceId, SAMPLE);
    await sleep(3);
    const second = await importObjects(t, s.workspaceId, [
      { object: 'contact', externalId: 'c1', fields: { $name: { value: { firstName: 'Ann', lastName: 'Smith' }, valueType: 'FULL_NAME' } } },
    ]);
    assert.equal(second.ids.contact?.c1, first.ids.contact?.c1);
    assert.equal(await count(t, s.workspaceId), 4);
    const list = (
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'c', $objectType: 'contact' }, relationships: { $contacts: [first.ids.contact?.c1] } })
    ).json();
    const c = (await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json().data[0];
    assert.deepEqual(c.fields, {
      $name: { value: { firstName: 'Ann', lastName: 'Smith' }, valueType: 'FULL_NAME' },
      $email: { value: null, valueType: 'EMAIL' },
      $profilePhotoUrl: { value: null, valueType: 'URL' },
    });
    assert.deepEqual(c.relationships.$account.values, []);
    assert.ok(c.updatedAt > c.createdAt, `${c.updatedAt} > ${c.createdAt}`);
    // A reference to a record imported earlier resolves from the workspace.
    const third = await importObjects(t, s.workspaceId, [
      { object: 'contact', externalId: 'c3', relationships: { $account: { objectType: 'account', values: ['a1'] } } },
    ]);
    assert.equal(third.counts.contact, 1);
  });

  test('every error names its line and field, and nothing is written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      // One string is a list of one (docs/records.md §Writing fields), checked as its element.
      [{ object: 'contact', externalId: 'x', fields: { $email: { value: 'nope', valueType: 'EMAIL' } } }, 'fields.$email.value'],
      [{ object: 'contact', externalId: 'x', fields: { $email: { value: ['nope'], valueType: 'EMAIL' } } }, 'fields.$email.value[0]'],
      [{ object: 'account', externalId: 'x', fields: { $domain: { value: 'https://x.test', valueType: 'URL' } } }, 'fields.$domain'],
      [{ object: 'opportunity', externalId: 'x', relationships: { $contacts: { objectType: 'contact', values: [] } } }, 'relationships.$contacts'],
      [{ object: 'account', externalId: 'x', fields: { nope: { value: 1 } } }, 'fields.nope'],
      [{ object: 'account', externalId: 'x', fields: { $industry: { value: ['Nope'] } } }, 'fields.$industry.value[0]'],
      [{ object: 'account', externalId: 'x', relationships: { $contact: { values: [] } } }, 'relationships.$contact'],
      [{ object: 'contact', externalId: 'x', fields: { $email: { value: 'a@b.test', valueType: 'TEXT' } } }, 'fields.$email.valueType'],
      [{ object: 'contact', externalId: 'x', fields: { $colour: { value: 'red', valueType: 'TEXT' } } }, 'fields.$colour'],
      [{ object: 'contact', externalId: 'x', fields: { 'Bad Slug': { value: 'red', valueType: 'TEXT' } } }, 'fields.Bad Slug'],
      [{ object: 'contact', externalId: 'x', fields: { $name: { value: 1, valueType: 'INTEGER' } } }, 'fields.$name.valueType'],
      [{ object: 'contact', externalId: 'x', fields: { size: { valueType: 'NUMBER' } } }, 'fields.size.value'],
      [
        { object: 'account', externalId: 'x', fields: { $primaryAddress: { value: { country: 'ZZ' }, valueType: 'ADDRESS' } } },
        'fields.$primaryAddress.value.country',
      ],
      [{ object: 'contact', externalId: 'x', fields: { $email: { value: ['a@b.test', 1], valueType: 'EMAIL' } } }, 'fields.$email.value[1]'],
      [{ object: 'contact', externalId: 'x', relationships: { $boss: { objectType: 'user', values: [] } } }, 'relationships.$boss'],
      [{ object: 'contact', externalId: 'x', relationships: { $account: { objectType: 'contact', values: ['a1'] } } }, 'relationships.$account.objectType'],
      [
        { object: 'opportunity', externalId: 'x', relationships: { $account: { objectType: 'account', values: ['a1', 'a2'] } } },
        'relationships.$account.values',
      ],
      // The shape of a relationship: its members, its values, each value once (short lists and long).
      [{ object: 'contact', externalId: 'x', relationships: { $account: { values: ['a1'], colour: 'red' } } }, 'relationships.$account.colour'],
      [{ object: 'contact', externalId: 'x', relationships: { $account: 'a1' } }, 'relationships.$account'],
      [{ object: 'contact', externalId: 'x', relationships: { $account: { values: 'a1' } } }, 'relationships.$account.values'],
      [{ object: 'contact', externalId: 'x', relationships: { $account: { values: ['a1', 2] } } }, 'relationships.$account.values[1]'],
      [{ object: 'contact', externalId: 'x', relationships: { $account: { values: ['a1', 'a2', 'a1'] } } }, 'relationships.$account.values[2]'],
      [
        { object: 'contact', externalId: 'x', relationships: { $account: { values: [...Array.from({ length: 12 }, (_, i) => `a${i}`), 'a3'] } } },
        'relationships.$account.values[12]',
      ],
      [{ object: 'contact', externalId: 'x', fields: { $name: 'Ann' } }, 'fields.$name'],
      // A blank required text and a name with no part are refused as the API refuses them.
      [{ object: 'account', externalId: 'x', fields: { $name: { value: ' \t' } } }, 'fields.$name.value'],
      [{ object: 'contact', externalId: 'x', fields: { $name: { value: { firstName: ' ', lastName: null } } } }, 'fields.$name.value'],
      [{ object: 'contact', externalId: 'x', colour: 'red' }, 'colour'],
      [{ object: 'lead', externalId: 'x' }, 'object'],
      // Checks shared with the CLI name their field too (InputError.param, never the message).
      [{ object: 'user', externalId: 'x', email: 'not-an-email' }, 'email'],
      [{ object: 'user', externalId: 'x', email: 'x@acme.test', role: 'owner' }, 'role'],
      [{ object: 'channel', externalId: 'x', provider: ' ', name: 'general', visibility: 'public' }, 'provider'],
      [{ object: 'channel', externalId: 'x', provider: 'slack', name: 'general', visibility: 'secret' }, 'visibility'],
    ];
    for (const [bad, field] of cases) {
      const err = await failure(t, s.workspaceId, ndjson([SAMPLE[3], SAMPLE[4], bad]));
      assert.equal(err.errors[0]?.line, 3, JSON.stringify(bad));
      assert.equal(err.errors[0]?.field, field, err.message);
    }
    const renamed = await failure(t, s.workspaceId, ndjson([{ object: 'account', externalId: 'x', fields: { $domain: { value: 'https://x.test' } } }]));
    assert.match(renamed.message, /\$website/, 'an earlier system name is refused naming what it became');
    // A reference that resolves nowhere is found before the first write: nothing written.
    const err = await failure(
      t,
      s.workspaceId,
      `${ndjson([SAMPLE[3], SAMPLE[4]])}\n\n${ndjson([{ object: 'contact', externalId: 'x', relationships: { $account: { objectType: 'account', values: ['nowhere'] } } }])}`,
    );
    assert.equal(err.errors[0]?.line, 4);
    assert.equal(err.errors[0]?.field, 'relationships.$account.values[0]');
    assert.match(err.message, /nowhere/);
    const fileRef = await failure(
      t,
      s.workspaceId,
      ndjson([{ object: 'account', externalId: 'a', relationships: { $files: { objectType: 'file', values: ['f1'] } } }]),
    );
    assert.equal(fileRef.errors[0]?.field, 'relationships.$files.values[0]');
    assert.equal(await count(t, s.workspaceId), 0);
    const users = await t.deps.db.kysely.selectFrom('users').select('id').where('workspace_id', '=', s.workspaceId).execute();
    assert.equal(users.length, 1); // only the seeded one
  });

  for (const commit of ['atomic', 'batched'] as const) {
    test(`${commit}: every line naming an externalId found nowhere is reported before anything is written, whatever its kind`, async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const before = await importObjects(t, s.workspaceId, [{ object: 'account', externalId: 'a-ws', fields: { $name: { value: 'Old', valueType: 'TEXT' } } }]);
      assert.equal(before.counts.account, 1);
      const at = (value: unknown, valueType: string) => ({ value, valueType });
      const objects = [
        { object: 'user', externalId: 'u1', email: 'owner@acme.test', name: 'Owner' },
        {
          object: 'definition',
          externalId: 'd-partner',
          definition: 'relationship',
          objectType: 'contact',
          key: 'partner',
          label: 'Partner',
          cardinality: 'has_one',
          targetType: 'account',
        },
        { object: 'account', externalId: 'a1', fields: { $name: at('Acme', 'TEXT') } },
        { object: 'contact', externalId: 'c1', relationships: { $account: { values: ['a1', 'a-ws', 'a-none'] } } },
        { object: 'contact', externalId: 'c2', relationships: { $account: { values: ['a-ws'] }, partner: { values: ['a1'] } } },
        { object: 'contact', externalId: 'c3', relationships: { partner: { values: ['a-none2'] } } },
        { object: 'opportunity', externalId: 'o1', relationships: { $champion: { values: ['c2'] }, $owner: { objectType: 'member', values: ['u-none'] } } },
        { object: 'list', externalId: 'l1', name: 'Hot', objectType: 'contact', members: ['c1', 'c-none'] },
        { object: 'channel', externalId: 'ch1', provider: 'slack', name: 'general', visibility: 'public', members: ['u1', 'u-none'] },
        { object: 'message', externalId: 'm1', channel: 'ch-none', fields: { $text: at('Hi', 'TEXT'), $sentAt: at('2026-03-01T09:00:00.000Z', 'DATETIME') } },
        { object: 'mailbox', externalId: 'mb1', user: 'u-none', address: 'ann@acme.test' },
        {
          object: 'email',
          externalId: 'e1',
          mailbox: 'mb-none',
          fields: { $sentAt: at('2026-03-02T09:00:00.000Z', 'DATETIME'), $from: at('b@globex.test', 'EMAIL') },
        },
        { object: 'account', externalId: 'a2', relationships: { $files: { values: ['f-none'] } } },
      ];
      let failed: ImportFailed | undefined;
      try {
        await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text: ndjson(objects), commit });
      } catch (err) {
        if (!(err instanceof ImportFailed)) throw err;
        failed = err;
      }
      assert.ok(failed, 'the import fails');
      assert.deepEqual(
        failed.errors.map((e) => `${e.line} ${e.field}`),
        [
          '4 relationships.$account.values[2]',
          '6 relationships.partner.values[0]',
          '7 relationships.$owner.values[0]',
          '8 members[1]',
          '9 members[1]',
          '10 channel',
          '11 user',
          '12 mailbox',
          '13 relationships.$files.values[0]',
        ],
      );
      assert.match(failed.message, /^line 4: relationships\.\$account\.values\[2\]: no account with externalId "a-none" in this import or the workspace$/m);
      assert.match(failed.message, /^line 7: relationships\.\$owner\.values\[0\]: no user with externalId "u-none" in this import or the workspace$/m);
      assert.equal(failed.committed, false);
      // Nothing is written: not the definition, the user, the records, the list nor the channel.
      const total = async (path: string) => (await call(t, s.secret, 'GET', path)).json().totalCount as number;
      assert.deepEqual(
        [await total('/v1/accounts'), await total('/v1/contacts'), await total('/v1/opportunities'), await total('/v1/lists'), await total('/v1/members')],
        [1, 0, 0, 0, 1],
      );
      assert.equal((await call(t, s.secret, 'GET', '/v1/contacts/definitions')).json().relationshipDefinitions.partner, undefined);
    });
  }

  test('a JSON array works the same, items numbered from 1', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const r = await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text: JSON.stringify(SAMPLE) });
    assert.equal(r.counts.contact, 2);
    const err = await failure(
      t,
      s.workspaceId,
      JSON.stringify([SAMPLE[3], { object: 'account', externalId: 'z', fields: { $name: { value: 10, valueType: 'TEXT' } } }]),
    );
    assert.equal(err.errors[0]?.line, 2);
    assert.equal(err.errors[0]?.field, 'fields.$name.value');
  });

  test('the CLI prints a --json summary with the id map, and exits 1 naming line and field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const env: Record<string, string> = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
    const out: string[] = [];
    const errs: string[] = [];
    const io = { out: (x: string) => void out.push(x), err: (x: string) => void errs.push(x), env, isTty: false };
    const file = join(t.tdb.dataDir, 'in.ndjson');
    writeFileSync(file, ndjson(SAMPLE));
    assert.equal(await main(['import', '--workspace', s.workspaceId, file, '--json'], io), 0, errs.join('\n'));
    const summary = JSON.parse(out.join(''));
    assert.deepEqual(summary.counts, { user: 1, account: 1, contact: 2, opportunity: 1 });
    assert.match(summary.ids.contact.c1, /^con_/);
    assert.equal(typeof summary.seconds, 'number');
    // The time of each step, in the order they ran (docs/import.md §Rules).
    // An import sharing the database (this test's own connection holds the SQLite file) commits
    // chunk by chunk, with no separate commit (docs/import.md §Sharing the database).
    assert.equal(summary.commit, t.tdb.databaseUrl ? 'atomic' : 'batched');
    // On PostgreSQL an atomic import then counts its records in the listings, under their locks.
    const steps = summary.commit === 'atomic' ? ['read', 'check', 'write', 'listings', 'commit', 'statistics'] : ['read', 'check', 'write', 'statistics'];
    assert.deepEqual(Object.keys(summary.phases), steps);
    for (const v of Object.values(summary.phases)) assert.ok(typeof v === 'number' && v >= 0, JSON.stringify(summary.phases));
    writeFileSync(file, ndjson([SAMPLE[3], { object: 'contact', externalId: 'c9', fields: { $email: { value: ['call me'], valueType: 'EMAIL' } } }]));
    assert.equal(await main(['import', '--workspace', s.workspaceId, file], io), 1);
    assert.match(errs.join('\n'), /line 2: fields\.\$email\.value\[0\]/);
    assert.equal(await count(t, s.workspaceId), 4);
  });

  test('after an import the planner has statistics of what it wrote (docs/design.md §Database statistics)', async () => {
    // A database of its own: SQLite analyzes a table again only once it has grown many times over.
    const tdb = await createTestDb(ctx().dialect);
    try {
      const env: Record<string, string> = { DATA_DIR: tdb.dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
      const out: string[] = [];
      const errs: string[] = [];
      const io = { out: (x: string) => void out.push(x), err: (x: string) => void errs.push(x), env, isTty: false };
      assert.equal(await main(['workspace', 'create', '--name', 'Stats', '--json'], io), 0, errs.join('\n'));
      const workspaceId = JSON.parse(out.join('')).id as string;
      // SQLite keeps no statistics of a table under STATISTICS_FLOOR rows: records of another
      // workspace leave the table one short of it, so that only what the import writes takes it past.
      const seeded = tdb.db.dialect === 'sqlite' ? STATISTICS_FLOOR - 1 : 0;
      if (seeded > 0) {
        await sql`insert into workspaces (id, name, created_at) values ('ws_seed', 'seed', '2026-01-01T00:00:00.000Z')`.execute(tdb.db.kysely);
        await sql`insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
          select 'con_seed' || n, 'ws_seed', 'contact', null, '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
          from (with recursive c(n) as (select 1 union all select n + 1 from c where n < ${seeded}) select n from c) s`.execute(tdb.db.kysely);
      }
      const file = join(tdb.dataDir, 'stats.ndjson');
      writeFileSync(file, ndjson(SAMPLE));
      assert.equal(await main(['import', '--workspace', workspaceId, file, '--json'], io), 0, errs.join('\n'));
      const db = tdb.db.kysely;
      if (tdb.db.dialect === 'sqlite') {
        // sqlite_stat1's first number is the table's row count when it was analyzed.
        const r = await sql<{ stat: string }>`select stat from sqlite_stat1 where tbl = 'records' and stat is not null`.execute(db);
        assert.ok(r.rows.length > 0, 'records analyzed');
        assert.equal(Number(r.rows[0]?.stat.split(' ')[0]), seeded + 4);
      } else {
        const r = await sql<{ n: number }>`select reltuples as n from pg_class where oid = to_regclass('records')`.execute(db);
        assert.equal(Number(r.rows[0]?.n), 4);
      }
    } finally {
      await tdb.drop();
    }
  });
});
