// `rolodex export` writes the same data as the same file on both databases (docs/import.md
// §Export): its lines, and the members of a line, come in code point order wherever they are
// ordered by text (object types by slug, definitions by type and key, a record's relationships by
// name), not in the order of a PostgreSQL database's collation. A database created with a
// language's collation (en_US, ICU) sets punctuation aside (`a_c` after `ab`, `$files` after
// `client`) where SQLite compares bytes; here every text column of the PostgreSQL schema that
// takes the database's collation is given such a collation, to stand for that database.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { byCodePoint } from '../../src/lib/chars.ts';
import { systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';

const line = (o: Record<string, unknown>) => JSON.stringify(o);
const text = (value: string) => ({ value, valueType: 'TEXT' });

/** Types, fields, options and relationships whose keys sort apart by bytes and by a language; records with such externalIds. */
const FIXTURE = [
  line({ object: 'definition', definition: 'objectType', slug: 'ab', label: 'AB' }),
  line({ object: 'definition', definition: 'objectType', slug: 'a_c', label: 'A C' }),
  line({ object: 'definition', definition: 'objectType', slug: 'a1', label: 'A1' }),
  ...['ab', 'a_c', 'a1'].flatMap((type) => [
    line({ object: 'definition', definition: 'field', objectType: type, key: 'name', label: 'Name', valueType: 'TEXT' }),
    line({
      object: 'definition',
      definition: 'field',
      objectType: type,
      key: 'tier',
      label: 'Tier',
      valueType: 'SINGLE_SELECT',
      options: ['Zeta', 'alpha', 'Éclair'],
    }),
  ]),
  line({ object: 'definition', definition: 'field', objectType: 'account', key: 'ab', label: 'AB', valueType: 'MULTI_SELECT', options: ['b', 'A'] }),
  line({ object: 'definition', definition: 'field', objectType: 'account', key: 'a_c', label: 'A C', valueType: 'SINGLE_SELECT', options: ['y', 'X'] }),
  line({
    object: 'definition',
    definition: 'relationship',
    objectType: 'account',
    key: 'client',
    label: 'Client',
    cardinality: 'HAS_ONE',
    targetObjectType: 'ab',
  }),
  line({ object: 'definition', definition: 'relationship', objectType: 'account', key: 'a_d', label: 'AD', cardinality: 'HAS_MANY', targetObjectType: 'a_c' }),
  line({ object: 'definition', definition: 'relationship', objectType: 'ab', key: 'b_x', label: 'BX', cardinality: 'HAS_ONE', targetObjectType: 'account' }),
  line({ object: 'definition', definition: 'relationship', objectType: 'ab', key: 'bw', label: 'BW', cardinality: 'HAS_ONE', targetObjectType: 'account' }),
  line({ object: 'definition', definition: 'option', objectType: 'opportunity', field: '$stage', label: 'on hold' }),
  line({ object: 'definition', definition: 'option', objectType: 'account', field: '$industry', label: 'Ärzte' }),
  line({ object: 'user', externalId: 'Ümit', email: 'umit@example.test', firstName: 'Ümit' }),
  line({ object: 'user', externalId: 'ann', email: 'ann@example.test', firstName: 'Ann' }),
  ...['b-1', 'B-1', 'ä-1', 'a_1', 'a-1', 'Z'].map((x) =>
    line({
      object: 'account',
      externalId: x,
      fields: { $name: text(`Acme ${x}`), ab: { value: ['A', 'b'], valueType: 'MULTI_SELECT' }, a_c: { value: 'X', valueType: 'SINGLE_SELECT' } },
      relationships: { client: { values: ['ab-Ö'] }, a_d: { values: ['ac-1', 'AC-2'] }, $owner: { values: ['Ümit'] } },
    }),
  ),
  ...['ab-Ö', 'ab-o'].map((x) =>
    line({
      object: 'ab',
      externalId: x,
      fields: { name: text(x), tier: { value: 'Éclair', valueType: 'SINGLE_SELECT' } },
      relationships: { b_x: { values: ['Z'] }, bw: { values: ['a-1'] } },
    }),
  ),
  ...['ac-1', 'AC-2'].map((x) => line({ object: 'a_c', externalId: x, fields: { name: text(x) }, relationships: {} })),
  line({ object: 'a1', externalId: 'é', fields: { name: text('é') }, relationships: {} }),
  line({ object: 'list', externalId: 'L-Ä', name: 'Ärzte', objectType: 'account', members: ['Z', 'a-1', 'ä-1'] }),
  line({ object: 'list', externalId: 'l-a', name: 'accounts', objectType: 'account', members: ['b-1'] }),
].join('\n');

/** Gives every text column of the schema that has the database's collation a language's, as a database created with one has. */
async function languageCollation(t: TestApp): Promise<void> {
  const db = t.deps.db.kysely;
  const columns = await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = current_schema() and c.data_type = 'text' and c.collation_name is null`.execute(db);
  for (const c of columns.rows)
    await sql`alter table ${sql.table(c.table_name)} alter column ${sql.ref(c.column_name)} type text collate "en-x-icu"`.execute(db);
}

async function exported(t: TestApp): Promise<string> {
  const ws = await createWorkspace(systemCtx(t.deps.db.kysely), { name: 'Order' });
  const input = join(t.tdb.dataDir, 'fixture.ndjson');
  writeFileSync(input, FIXTURE);
  const im = await rolodex(t, ['import', '--workspace', ws.id, input]);
  assert.equal(im.code, 0, im.err);
  const file = join(t.tdb.dataDir, 'export.ndjson');
  const ex = await rolodex(t, ['export', '--workspace', ws.id, file]);
  assert.equal(ex.code, 0, ex.err);
  return readFileSync(file, 'utf8');
}

const dialects = testDialects();
const apps: TestApp[] = [];
before(async () => {
  for (const d of dialects) apps.push(await buildTestApp(d));
  const pg = apps.find((t) => t.dialect === 'postgres');
  if (pg) await languageCollation(pg);
});
after(async () => {
  for (const t of apps) await t.close();
});

test('the same data exports the same bytes on SQLite and on PostgreSQL with a language collation', { skip: dialects.length < 2 }, async () => {
  const [lite, pg] = [await exported(apps[0]!), await exported(apps[1]!)];
  const lines = lite.trim().split('\n');
  // Code point order: `a1` < `a_c` < `ab`, and `$owner` < `a_d` < `client`.
  const slugs = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.definition === 'objectType');
  assert.deepEqual(
    slugs.map((l) => l.slug),
    ['a1', 'a_c', 'ab'],
  );
  const acme = JSON.parse(lines.find((l) => l.includes('"externalId":"Z"'))!) as { relationships: object };
  assert.deepEqual(Object.keys(acme.relationships), ['$owner', 'a_d', 'client']);
  const pgLines = pg.trim().split('\n');
  for (const [i, l] of lines.entries()) assert.equal(pgLines[i], l, `line ${i + 1}`);
  assert.equal(pg, lite);
});

test('byCodePoint orders by code point, as UTF-8 bytes do, where UTF-16 units do not', () => {
  const texts = ['\u{1F600}', '\uFFFD', 'é', 'Z', 'a', '\uE000', 'ab', 'a_c'];
  const bytes = (s: string) => Buffer.from(s, 'utf8');
  assert.deepEqual(
    texts.toSorted(byCodePoint),
    texts.toSorted((x, y) => Buffer.compare(bytes(x), bytes(y))),
  );
});
