// Migration 0008_records_data on a database holding records of the earlier shape (every earlier
// system field and relationship, custom attributes of every kind, several workspaces), on both
// databases: every value is converted to the stored format of docs/records.md, the definitions
// its data needs are created, the value index equals what the live code builds, and nothing else
// changes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { valueRows } from '../../src/records/index/values.ts';
import { contactIdsByEmails } from '../../src/records/index/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

// Records are written at 0006: 0007 (run with 0008, as an upgrade does) ranks them.
const at = '2026-03-01T10:00:00.000Z';
const f = (value: unknown, valueType: string) => ({ value, valueType });

const RECORDS: Array<[string, string, string, Record<string, unknown>]> = [
  [
    'acc_1',
    'ws_a',
    'account',
    {
      $name: f('Globex', 'TEXT'),
      $domain: f('https://globex.example', 'URL'),
      $address: f({ city: 'Springfield', country: 'US', latitude: 1.5 }, 'ADDRESS'),
      $industry: f('Software', 'SINGLE_SELECT'),
      $employees: f(120, 'NUMBER'),
      $phone: f('+1 555 0100', 'TELEPHONE'),
      tier: f('Gold', 'SINGLE_SELECT'),
      score: f(5, 'NUMBER'),
    },
  ],
  [
    'acc_2',
    'ws_a',
    'account',
    {
      $name: f('Initech', 'TEXT'),
      $industry: f('Paper', 'SINGLE_SELECT'),
      $domain: f(null, 'URL'),
      tier: f('Silver', 'SINGLE_SELECT'),
      score: f('High', 'TEXT'),
    },
  ],
  [
    'acc_3',
    'ws_a',
    'account',
    { $name: f('Umbrella', 'TEXT'), $industry: f('Software', 'SINGLE_SELECT'), score: f(7, 'NUMBER'), tags: f(['b', 'a'], 'MULTI_SELECT') },
  ],
  [
    'con_1',
    'ws_a',
    'contact',
    {
      $name: f({ firstName: 'Hank', lastName: 'Scorpio' }, 'FULL_NAME'),
      $email: f('Hank@Globex.example', 'EMAIL'),
      $phone: f('+1 555 0101', 'TELEPHONE'),
      $title: f('CEO', 'TEXT'),
      $address: f({ city: 'Cypress Creek' }, 'ADDRESS'),
      $linkedin: f('hank', 'SOCIAL_HANDLE'),
      phone: f('ask the assistant', 'TEXT'),
      owner: f('sales', 'TEXT'),
      newsletter: f(false, 'CHECKBOX'),
    },
  ],
  ['con_2', 'ws_a', 'contact', { $name: f({ firstName: 'Milton' }, 'FULL_NAME'), $email: f('milton@initech.example', 'EMAIL') }],
  [
    'opp_1',
    'ws_a',
    'opportunity',
    {
      $name: f('Doomsday device', 'TEXT'),
      $amount: f(1_000_000, 'CURRENCY'),
      $stage: f('Negotiation', 'SINGLE_SELECT'),
      $closeDate: f('2026-09-30T00:00:00.000Z', 'DATETIME'),
      $description: f('# Plan', 'MARKDOWN'),
      priority: f(['High', 'Urgent'], 'MULTI_SELECT'),
    },
  ],
  ['opp_2', 'ws_a', 'opportunity', { $name: f('Stapler', 'TEXT'), $stage: f('Won big', 'SINGLE_SELECT') }],
  ['acc_b1', 'ws_b', 'account', { $name: f('Globex B', 'TEXT'), $industry: f('Software', 'SINGLE_SELECT'), $domain: f('https://b.example', 'URL') }],
  ['con_b1', 'ws_b', 'contact', { $name: f({ lastName: 'Bee' }, 'FULL_NAME'), $phone: f('+49 30 1234567', 'TELEPHONE') }],
  ['opp_b1', 'ws_b', 'opportunity', { $name: f('Hive', 'TEXT'), $stage: f('Negotiation', 'SINGLE_SELECT') }],
];
// Enough contacts to take several batches of the migration.
const FILLER = Array.from({ length: 1100 }, (_, i) => `con_f${String(i).padStart(4, '0')}`);

const rel = (source: string, name: string, objectType: string, targets: string[]) =>
  targets.map((t, i) => ({ source_id: source, name, object_type: objectType, target_id: t, position: i }));
const RELATIONSHIPS = [
  ...rel('acc_1', '$owner', 'user', ['usr_a']),
  ...rel('acc_1', '$files', 'file', ['fil_1', 'fil_2']),
  ...rel('con_1', '$owner', 'user', ['usr_a']),
  ...rel('con_1', '$account', 'account', ['acc_1']),
  ...rel('opp_1', '$owner', 'user', ['usr_a']),
  ...rel('opp_1', '$account', 'account', ['acc_1']),
  ...rel('opp_1', '$contacts', 'contact', ['con_1', 'con_2']),
  ...rel('con_b1', '$owner', 'user', ['usr_b']),
  ...rel('opp_b1', '$contacts', 'contact', ['con_b1']),
];

for (const dialect of testDialects()) {
  describe(`migration 0008_records_data [${dialect}]`, () => {
    let tdb: TestDb;
    let db: any;
    let before0008: { workspaces: unknown[]; users: unknown[]; records: unknown[] };
    const defs = new Map<string, TypeDefinitions>();
    const definitions = async (ws: string, type: string) => {
      const key = `${ws}/${type}`;
      if (!defs.has(key)) defs.set(key, (await loadDefinitions(operatorCtx(tdb.db.kysely, ws), { objectType: type }))!);
      return defs.get(key)!;
    };
    /** The id of an option as the live definitions show it (default or added by the migration). */
    const opt = async (ws: string, type: string, field: string, label: string) => {
      const o = (await definitions(ws, type)).fields.get(field)?.options?.find((x) => x.label === label);
      assert.ok(o, `${ws} ${type} ${field} has option ${label}`);
      return o.id;
    };

    before(async () => {
      tdb = await createTestDb(dialect, { before: '0007' });
      db = tdb.db.kysely;
      await db
        .insertInto('workspaces')
        .values(['ws_a', 'ws_b', 'ws_c'].map((id) => ({ id, name: id, created_at: at })))
        .execute();
      const user = (id: string, ws: string) => ({
        id,
        workspace_id: ws,
        external_id: null,
        email: `${id}@x.test`,
        first_name: 'U',
        last_name: null,
        role: 'member',
        created_at: at,
        updated_at: at,
      });
      await db
        .insertInto('users')
        .values([user('usr_a', 'ws_a'), user('usr_b', 'ws_b')])
        .execute();
      const row = (id: string, ws: string, kind: string, fields: unknown, i: number) => ({
        id,
        workspace_id: ws,
        kind,
        external_id: `x-${id}`,
        fields: JSON.stringify(fields),
        created_at: `2026-02-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
        updated_at: at,
      });
      await db
        .insertInto('records')
        .values(RECORDS.map(([id, ws, kind, fields], i) => row(id, ws, kind, fields, i)))
        .execute();
      const filler = FILLER.map((id, i) =>
        row(id, 'ws_b', 'contact', { $email: f(`${id}@b.example`, 'EMAIL'), rating: f(i, 'NUMBER'), $title: f(null, 'TEXT') }, i),
      );
      for (let i = 0; i < filler.length; i += 100)
        await db
          .insertInto('records')
          .values(filler.slice(i, i + 100))
          .execute();
      await db.insertInto('entity_relationships').values(RELATIONSHIPS).execute();
      before0008 = {
        workspaces: await db.selectFrom('workspaces').selectAll().orderBy('id').execute(),
        users: await db.selectFrom('users').selectAll().orderBy('id').execute(),
        records: await db.selectFrom('records').select(['id', 'workspace_id', 'kind', 'external_id', 'created_at', 'updated_at']).orderBy('id').execute(),
      };
      await migrate(tdb.db);
    });
    after(async () => tdb.drop());

    const fieldsOf = async (id: string) => JSON.parse((await db.selectFrom('records').select('fields').where('id', '=', id).executeTakeFirstOrThrow()).fields);

    test('every value is in the stored format under its new key', async () => {
      assert.deepEqual(await fieldsOf('acc_1'), {
        $name: 'Globex',
        $website: ['https://globex.example'],
        $primaryAddress: { city: 'Springfield', country: 'US', latitude: 1.5 },
        $industry: [await opt('ws_a', 'account', '$industry', 'Software')],
        employees: 120,
        phone: '+1 555 0100',
        tier: await opt('ws_a', 'account', 'tier', 'Gold'),
        score: 5,
      });
      assert.deepEqual(await fieldsOf('acc_2'), {
        $name: 'Initech',
        $industry: [await opt('ws_a', 'account', '$industry', 'Paper')],
        tier: await opt('ws_a', 'account', 'tier', 'Silver'),
        score_2: 'High',
      });
      assert.deepEqual(await fieldsOf('acc_3'), {
        $name: 'Umbrella',
        $industry: [await opt('ws_a', 'account', '$industry', 'Software')],
        score: 7,
        tags: [await opt('ws_a', 'account', 'tags', 'b'), await opt('ws_a', 'account', 'tags', 'a')],
      });
      assert.deepEqual(await fieldsOf('con_1'), {
        $name: { firstName: 'Hank', lastName: 'Scorpio' },
        $email: ['Hank@Globex.example'],
        phone_2: '+1 555 0101',
        title: 'CEO',
        address: { city: 'Cypress Creek' },
        // Migration 0056 then stores handles as profile URLs and numbers as E.164, and keeps what
        // it cannot normalise (an invalid number, a text) as it was.
        linkedin: 'https://linkedin.com/in/hank',
        phone: 'ask the assistant',
        owner: 'sales',
        newsletter: false,
      });
      assert.deepEqual(await fieldsOf('con_2'), { $name: { firstName: 'Milton' }, $email: ['milton@initech.example'] });
      assert.deepEqual(await fieldsOf('opp_1'), {
        $name: 'Doomsday device',
        amount: 1_000_000,
        $stage: await opt('ws_a', 'opportunity', '$stage', 'Negotiation'),
        close_date: '2026-09-30T00:00:00.000Z',
        description: '# Plan',
        priority: [await opt('ws_a', 'opportunity', 'priority', 'High'), await opt('ws_a', 'opportunity', 'priority', 'Urgent')],
      });
      assert.deepEqual(await fieldsOf('opp_2'), { $name: 'Stapler', $stage: await opt('ws_a', 'opportunity', '$stage', 'Won big') });
      assert.deepEqual(await fieldsOf('acc_b1'), {
        $name: 'Globex B',
        $industry: [await opt('ws_b', 'account', '$industry', 'Software')],
        $website: ['https://b.example'],
      });
      assert.deepEqual(await fieldsOf('con_b1'), { $name: { lastName: 'Bee' }, phone: '+49301234567' });
      assert.deepEqual(await fieldsOf('opp_b1'), { $name: 'Hive', $stage: await opt('ws_b', 'opportunity', '$stage', 'Negotiation') });
      assert.deepEqual(await fieldsOf('con_f1099'), { $email: ['con_f1099@b.example'], rating: 1099 });
      // Default options keep their derived ids, and they differ between workspaces.
      assert.notEqual(await opt('ws_a', 'account', '$industry', 'Software'), await opt('ws_b', 'account', '$industry', 'Software'));
    });

    test('definitions are created where the data needs them, in a stable order', async () => {
      const shape = async (ws: string, type: string) => {
        const d = await definitions(ws, type);
        const fields = [...d.fields.values()].filter((x) => !x.system);
        return {
          fields: fields.map((x) => [x.key, x.label, x.valueType, x.handleService, x.multipleValues, x.unique, x.currency]),
          relationships: [...d.relationships.values()].filter((r) => !r.system).map((r) => [r.key, r.label, r.cardinality, r.objectType]),
        };
      };
      const a = await shape('ws_a', 'account');
      assert.deepEqual(a.fields, [
        ['phone', 'Phone', 'TELEPHONE', null, false, false, null],
        ['employees', 'Employees', 'NUMBER', null, false, false, null],
        ['score', 'Score', 'NUMBER', null, false, false, null],
        ['score_2', 'Score 2', 'TEXT', null, false, false, null],
        ['tags', 'Tags', 'MULTI_SELECT', null, false, false, null],
        ['tier', 'Tier', 'SINGLE_SELECT', null, false, false, null],
      ]);
      assert.deepEqual(
        (await shape('ws_a', 'contact')).fields.map((x) => x.slice(0, 4)),
        [
          ['phone_2', 'Phone', 'TELEPHONE', null],
          ['title', 'Title', 'TEXT', null],
          ['address', 'Address', 'ADDRESS', null],
          ['linkedin', 'LinkedIn', 'SOCIAL_HANDLE', 'LINKEDIN'],
          ['newsletter', 'Newsletter', 'CHECKBOX', null],
          ['owner', 'Owner', 'TEXT', null],
          ['phone', 'Phone', 'TEXT', null],
        ],
      );
      assert.deepEqual((await shape('ws_a', 'contact')).relationships, [['owner_2', 'Owner', 'has_one', 'member']]);
      assert.deepEqual(
        (await shape('ws_a', 'opportunity')).fields.map((x) => x.slice(0, 3)),
        [
          ['amount', 'Amount', 'CURRENCY'],
          ['close_date', 'Close date', 'DATETIME'],
          ['description', 'Description', 'MARKDOWN'],
          ['priority', 'Priority', 'MULTI_SELECT'],
        ],
      );
      assert.deepEqual((await shape('ws_a', 'opportunity')).relationships, [['contacts', 'Contacts', 'has_many', 'contact']]);
      // Added options: what no default matched, in order of first use after the defaults.
      const added = await db
        .selectFrom('select_options')
        .select(['workspace_id', 'object_type', 'field_key', 'label', 'position'])
        .orderBy('workspace_id')
        .orderBy('object_type')
        .orderBy('field_key')
        .orderBy('position')
        .execute();
      assert.deepEqual(
        added.map((o: any) => [o.workspace_id, o.object_type, o.field_key, o.label, Number(o.position)]),
        [
          ['ws_a', 'account', '$industry', 'Paper', 0],
          ['ws_a', 'account', 'tags', 'b', 0],
          ['ws_a', 'account', 'tags', 'a', 1],
          ['ws_a', 'account', 'tier', 'Gold', 0],
          ['ws_a', 'account', 'tier', 'Silver', 1],
          ['ws_a', 'opportunity', '$stage', 'Won big', 0],
          ['ws_a', 'opportunity', 'priority', 'High', 0],
          ['ws_a', 'opportunity', 'priority', 'Urgent', 1],
        ],
      );
      // ws_b: only what its data holds (no $title definition for values that were all null).
      assert.deepEqual((await shape('ws_b', 'account')).fields, []);
      assert.deepEqual(
        (await shape('ws_b', 'contact')).fields.map((x) => x[0]),
        ['phone', 'rating'],
      );
      assert.deepEqual((await shape('ws_b', 'contact')).relationships, [['owner', 'Owner', 'has_one', 'member']]);
      assert.deepEqual((await shape('ws_b', 'opportunity')).relationships, [['contacts', 'Contacts', 'has_many', 'contact']]);
      // A workspace without records gets nothing.
      for (const table of ['field_definitions', 'relationship_definitions', 'select_options'])
        assert.equal((await db.selectFrom(table).select('id').where('workspace_id', '=', 'ws_c').execute()).length, 0);
    });

    test('the value index holds exactly the rows the live code builds for every record', async () => {
      const records = await db.selectFrom('records').select(['id', 'workspace_id', 'kind', 'fields']).orderBy('id').execute();
      const order = (r: any) => `${r.record_id}|${r.field}|${r.value_text}|${r.value_num}`;
      const expected = [];
      for (const r of records) {
        const d = await definitions(r.workspace_id, r.kind);
        const values = JSON.parse(r.fields);
        for (const key of Object.keys(values)) assert.ok(d.fields.has(key), `${r.id}: ${key} is defined`);
        expected.push(...valueRows(r.workspace_id, d, r.id, values));
      }
      const actual = await db.selectFrom('record_values').selectAll().execute();
      const norm = (x: any) => ({ ...x, value_num: x.value_num === null ? null : Number(x.value_num) });
      assert.deepEqual(
        actual.map(norm).sort((a: any, b: any) => (order(a) < order(b) ? -1 : 1)),
        expected.sort((a, b) => (order(a) < order(b) ? -1 : 1)),
      );
      assert.equal(expected.filter((x) => x.record_id.startsWith('con_f')).length, 2 * FILLER.length);
      const found = await contactIdsByEmails(tdb.db.kysely, 'ws_a', ['HANK@globex.EXAMPLE']);
      assert.deepEqual([...found.values()], [['con_1']]);
    });

    test('relationships take their new keys, owners point at members; nothing else changes', async () => {
      const rows = await db.selectFrom('entity_relationships').selectAll().orderBy('source_id').orderBy('name').orderBy('position').execute();
      const renamed = RELATIONSHIPS.map((r) => ({
        ...r,
        name:
          r.source_id === 'con_1' && r.name === '$owner'
            ? 'owner_2'
            : r.source_id === 'con_b1' && r.name === '$owner'
              ? 'owner'
              : r.name === '$contacts'
                ? 'contacts'
                : r.name,
        object_type: r.object_type === 'user' ? 'member' : r.object_type,
      }));
      const key = (r: any) => `${r.source_id}|${r.name}|${r.position}`;
      assert.deepEqual(
        rows.map((r: any) => ({ ...r, position: Number(r.position) })),
        renamed.sort((a, b) => (key(a) < key(b) ? -1 : 1)),
      );
      // Columns added after 0008 (the default country of 0055, the users' address keys of 0080) are left out.
      assert.deepEqual(await db.selectFrom('workspaces').select(['id', 'name', 'created_at']).orderBy('id').execute(), before0008.workspaces);
      const users = await db.selectFrom('users').selectAll().orderBy('id').execute();
      assert.deepEqual(
        users.map(({ email_key: _, ...u }: any) => u),
        before0008.users.map((u: any) => ({ ...u })),
      );
      assert.deepEqual(
        await db.selectFrom('records').select(['id', 'workspace_id', 'kind', 'external_id', 'created_at', 'updated_at']).orderBy('id').execute(),
        before0008.records,
      );
    });
  });
}
