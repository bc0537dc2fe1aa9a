// The bulk path of `rolodex import` (docs/import.md §Speed): a large import on SQLite drops the
// value-keyed indexes, writes its rows and builds them again in its transaction. The same file
// imported either way must leave the same indexes and give every filter and totalCount the same
// answer, on both databases (PostgreSQL keeps its indexes and packs the postings only).
import assert from 'node:assert/strict';
import { type KyselyPlugin, sql } from 'kysely';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { IMPORT_CHUNK, ImportFailed, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { PACKS } from '../../src/records/index/repository.ts';
import { BULK_LOAD, IMPORT_BATCH } from '../../src/records/import.ts';
import { openDb } from '../../src/db/database.ts';
import { THREAD_QUEUE } from '../../src/db/sqlite/writer.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';

const N = 60;
const FILE = [
  { object: 'definition', externalId: 'd-phone', definition: 'field', objectType: 'contact', key: 'phone', label: 'Phone', valueType: 'TELEPHONE' },
  { object: 'definition', externalId: 'd-score', definition: 'field', objectType: 'contact', key: 'score', label: 'Score', valueType: 'NUMBER' },
  { object: 'definition', externalId: 'd-title', definition: 'field', objectType: 'contact', key: 'title', label: 'Title', valueType: 'TEXT' },
  // A link between contacts: with small batches, a contact whose partner comes in a later batch
  // keeps its links for the link phase, the others write theirs with their batch.
  {
    object: 'definition',
    externalId: 'd-partner',
    definition: 'relationship',
    objectType: 'contact',
    key: 'partner',
    label: 'Partner',
    cardinality: 'has_one',
    targetType: 'contact',
  },
  ...['a0', 'a1', 'a2'].map((externalId) => ({ object: 'account', externalId, fields: { $name: { value: `Company ${externalId}`, valueType: 'TEXT' } } })),
  ...Array.from({ length: N }, (_, i) => ({
    object: 'contact',
    // Every third contact has no account; every fourth has a partner five contacts on.
    relationships: {
      ...(i % 3 === 2 ? {} : { $account: { values: [`a${i % 3}`] } }),
      ...(i % 4 === 0 ? { partner: { values: [`c${(i + 5) % N}`] } } : {}),
    },
    externalId: `c${i}`,
    fields: {
      $name: { value: { firstName: ['Ann', 'Bob', 'Chloé'][i % 3], lastName: `Lee${i % 7}` }, valueType: 'FULL_NAME' },
      $email: { value: Array.from({ length: 1 + (i % 3) }, (_, k) => `p${i}.${k}@${['acme', 'globex'][(i + k) % 2]}.test`), valueType: 'EMAIL' },
      score: { value: i % 10, valueType: 'NUMBER' },
      title: { value: ['CEO', 'Engineer'][i % 2], valueType: 'TEXT' },
      ...(i % 2 === 0 ? { phone: { value: `+1 202 555 01${String(i).padStart(2, '0')}`, valueType: 'TELEPHONE' } } : {}),
    },
  })),
];
const TEXT = FILE.map((o) => JSON.stringify(o)).join('\n');

const QUERIES = [
  '',
  '$email[contains]=globex',
  '$email[contains]=p1',
  'phone[contains]=555 011',
  'phone[-contains]=0102',
  '$name[startsWith]=chlo',
  '$name=ann lee3',
  'score[greaterThan]=6',
  'score=3&title=engineer',
  'title[-equal]=ceo',
];

/**
 * `thread` (SQLite): through a connection of the same file whose statements run on the writer
 * thread of `rolodex import` (src/db/sqlite/writer.ts), with at most 2 statements in flight.
 * `chunk`: the import reads and writes each kind that many objects at a time.
 */
async function importWith(t: TestApp, bulk: boolean, small = false, thread = false, chunk?: number): Promise<{ secret: string; byId: Map<string, string> }> {
  const seeded = await seedWorkspace(t);
  const saved = [{ ...BULK_LOAD }, { ...IMPORT_BATCH }, { ...PACKS }, { ...THREAD_QUEUE }, { ...IMPORT_CHUNK }] as const;
  if (chunk !== undefined) IMPORT_CHUNK.atomic = chunk;
  Object.assign(BULK_LOAD, bulk ? { min: 1, share: 0 } : { min: Infinity });
  // Batches of 7 contacts, packs written every 150 postings or so: several packs per key.
  if (small) {
    Object.assign(IMPORT_BATCH, { size: 7 });
    Object.assign(PACKS, { postings: 150 });
  }
  const db = thread ? openDb({ dataDir: t.tdb.dataDir, sqliteFile: t.tdb.sqliteFile, writerThread: true }) : t.deps.db;
  if (thread) Object.assign(THREAD_QUEUE, { statements: 2 });
  // The index builds sort under a cache of their own and then give the import its cache back.
  if (thread) await sql`pragma cache_size = -12345`.execute(db.kysely);
  try {
    const out = await runImport(operatorCtx(db.kysely, seeded.workspaceId), { kinds: importKinds(), text: TEXT });
    if (thread) assert.deepEqual((await sql`pragma cache_size`.execute(db.kysely)).rows, [{ cache_size: -12345 }]);
    const byId = new Map([...Object.entries(out.ids.contact ?? {}), ...Object.entries(out.ids.account ?? {})].map(([ext, id]) => [id, ext]));
    return { secret: seeded.secret, byId };
  } finally {
    if (thread) await db.close();
    Object.assign(BULK_LOAD, saved[0]);
    Object.assign(IMPORT_BATCH, saved[1]);
    Object.assign(PACKS, saved[2]);
    Object.assign(THREAD_QUEUE, saved[3]);
    Object.assign(IMPORT_CHUNK, saved[4]);
  }
}

async function count(t: TestApp, table: 'record_trigrams' | 'record_trigram_packs'): Promise<number> {
  return Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(t.deps.db.kysely)).rows[0]?.n);
}

async function indexes(t: TestApp): Promise<string[]> {
  if (t.dialect !== 'sqlite') return [];
  const r = await sql<{
    sql: string;
  }>`select sql from sqlite_master where type = 'index' and tbl_name in ('record_values', 'record_trigrams', 'entity_relationships') order by name`.execute(
    t.deps.db.kysely,
  );
  return r.rows.map((x) => x.sql);
}

eachDialect('bulk import', (ctx) => {
  test('a bulk import leaves the same indexes, and every filter and totalCount answer as after an ordinary one', async () => {
    const t = ctx();
    const before = await indexes(t);
    const ordinary = await importWith(t, false);
    assert.equal(await count(t, 'record_trigram_packs'), 0, 'an ordinary import writes postings');
    const postings = await count(t, 'record_trigrams');
    const bulk = await importWith(t, true);
    assert.deepEqual(await indexes(t), before);
    // The bulk import wrote its postings as packs only (docs/filtering.md §Indexes, Packs).
    assert.equal(await count(t, 'record_trigrams'), postings);
    assert.ok((await count(t, 'record_trigram_packs')) > 0);
    const packsPerKey = async () =>
      Number(
        (await sql<{ n: number }>`select max(c) as n from (select count(*) as c from record_trigram_packs group by key) x`.execute(t.deps.db.kysely)).rows[0]
          ?.n,
      );
    assert.equal(await packsPerKey(), 1);
    // Small batches and packs written every few batches: a key's postings in several packs.
    const small = await importWith(t, true, true);
    assert.ok((await packsPerKey()) > 1);
    assert.equal(await count(t, 'record_trigrams'), postings);
    // The same through the writer thread of `rolodex import`, with its inserts in flight.
    const threaded = t.dialect === 'sqlite' ? await importWith(t, true, true, true) : small;
    // The contacts read in four chunks: the bulk load spans them all, the type having had no
    // records when its first chunk began (no posting row, the indexes built once after them).
    const chunked = await importWith(t, true, false, false, 16);
    assert.equal(await count(t, 'record_trigrams'), postings);
    assert.deepEqual(await indexes(t), before);
    for (const q of QUERIES) {
      const page = async (w: { secret: string; byId: Map<string, string> }) => {
        const found: string[] = [];
        let totalCount = -1;
        for (let offset = 0; offset < N; offset += 25) {
          const res = await call(t, w.secret, 'GET', `/v1/contacts?offset=${offset}&${encodeURI(q)}`);
          assert.equal(res.statusCode, 200, res.body);
          const body = res.json();
          totalCount = body.totalCount;
          for (const r of body.data as { id: string; relationships: Record<'$account' | 'partner', { values: string[] }> }[]) {
            const links = [...r.relationships.$account.values, ...r.relationships.partner.values].map((a) => w.byId.get(a));
            found.push(`${w.byId.get(r.id)}:${links.join()}`);
          }
        }
        return { totalCount, data: found.sort() };
      };
      const a = await page(ordinary);
      assert.ok(a.totalCount > 0 && a.totalCount <= N, `${q}: ${a.totalCount}`);
      assert.deepEqual(await page(bulk), a, q);
      assert.deepEqual(await page(small), a, q);
      assert.deepEqual(await page(threaded), a, q);
      assert.deepEqual(await page(chunked), a, q);
    }
    // The other end of each contact's account, read by target (entity_relationships_inverse, which
    // a bulk load builds after its rows).
    const accounts = async (w: { secret: string; byId: Map<string, string> }) => {
      const res = await call(t, w.secret, 'GET', '/v1/accounts');
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data as { id: string; relationships: { $contact: { values: string[] } } }[];
      return data
        .map(
          (r) =>
            `${w.byId.get(r.id)}:${r.relationships.$contact.values
              .map((c) => w.byId.get(c))
              .sort()
              .join()}`,
        )
        .sort();
    };
    const inverse = await accounts(ordinary);
    assert.equal(inverse.length, 3);
    // Two contacts in three have an account, a0 or a1; a2 has none.
    assert.equal(inverse.join(',').match(/c\d+/g)?.length, (2 * N) / 3, inverse.join(' '));
    assert.deepEqual(await accounts(bulk), inverse);
    assert.deepEqual(await accounts(small), inverse);
    assert.deepEqual(await accounts(threaded), inverse);
    assert.deepEqual(await accounts(chunked), inverse);
  });

  test('a bulk import that fails leaves the indexes as they were, and no posting', async () => {
    const t = ctx();
    const before = await indexes(t);
    const postings = async () => [await count(t, 'record_trigrams'), await count(t, 'record_trigram_packs')];
    const postingsBefore = await postings();
    const seeded = await seedWorkspace(t);
    const saved = { ...BULK_LOAD };
    Object.assign(BULK_LOAD, { min: 1, share: 0 });
    try {
      // The last contact's link fails after every row and index of the contacts was written: its
      // relationship is defined nowhere.
      const bad = { object: 'contact', externalId: 'bad', relationships: { nope: { values: ['a0'] } } };
      await assert.rejects(
        runImport(operatorCtx(t.deps.db.kysely, seeded.workspaceId), { kinds: importKinds(), text: `${TEXT}\n${JSON.stringify(bad)}` }),
        (err: Error) => err instanceof ImportFailed && /relationships\.nope: is not a relationship of contact/.test(err.message),
      );
    } finally {
      Object.assign(BULK_LOAD, saved);
    }
    assert.deepEqual(await indexes(t), before);
    assert.deepEqual(await postings(), postingsBefore);
    assert.equal((await call(t, seeded.secret, 'GET', '/v1/contacts')).json().totalCount, 0);
  });

  test('records of a bulk import rewritten through the API: contains follows their values, each record once', async () => {
    const t = ctx();
    const w = await importWith(t, true);
    const ext = new Map([...w.byId].map(([id, e]) => [e, id]));
    const c1 = ext.get('c1') as string; // p1.0@globex.test, p1.1@acme.test
    const found = async (needle: string) => {
      const res = await call(t, w.secret, 'GET', `/v1/contacts?$email[contains]=${encodeURIComponent(needle)}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      return { totalCount: body.totalCount as number, ids: (body.data as { id: string }[]).map((r) => w.byId.get(r.id)).sort() };
    };
    assert.deepEqual(await found('p1.1@'), { totalCount: 1, ids: ['c1'] });
    const update = async (emails: string[]) => {
      const res = await call(t, w.secret, 'POST', `/v1/contacts/${c1}`, { fields: { $email: emails } });
      assert.equal(res.statusCode, 200, res.body);
    };
    // Its packed trigrams of p1.1@acme.test are left behind: a stale candidate, refused by its values.
    await update(['zed@work.example']);
    assert.deepEqual(await found('p1.1@'), { totalCount: 0, ids: [] });
    assert.deepEqual(await found('zed@work'), { totalCount: 1, ids: ['c1'] });
    // The address back: its trigrams are both packed and posted again; the record is found once.
    await update(['p1.1@acme.test']);
    assert.deepEqual(await found('p1.1@'), { totalCount: 1, ids: ['c1'] });
    assert.deepEqual(await found('zed@work'), { totalCount: 0, ids: [] });
    assert.deepEqual(await found('p1.1@acme.te'), { totalCount: 1, ids: ['c1'] });
  });

  test("an ordinary import looks its type's records up once, before writing any, not batch by batch", async () => {
    const t = ctx();
    const seeded = await seedWorkspace(t);
    // Counts the statements that look records up by externalId.
    let lookups = 0;
    const counter: KyselyPlugin = {
      transformQuery: ({ node }) => {
        const text = JSON.stringify(node);
        if (node.kind === 'SelectQueryNode' && text.includes('"records"') && text.includes('"external_id"')) lookups++;
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const saved = [{ ...BULK_LOAD }, { ...IMPORT_BATCH }, { ...IMPORT_CHUNK }] as const;
    Object.assign(BULK_LOAD, { min: Infinity });
    Object.assign(IMPORT_BATCH, { size: 7 });
    // Chunks of 20 objects: each type's records span several chunks, as a large import's do.
    Object.assign(IMPORT_CHUNK, { atomic: 20 });
    try {
      const run = () => runImport(operatorCtx(t.deps.db.kysely.withPlugin(counter), seeded.workspaceId), { kinds: importKinds(), text: TEXT });
      // Three chunks of nine batches of new contacts, then the same contacts updated: one lookup
      // per type (the accounts' and the contacts') each time.
      const first = await run();
      assert.equal(lookups, 2);
      lookups = 0;
      const again = await run();
      assert.equal(lookups, 2);
      assert.deepEqual(again.ids.contact, first.ids.contact);
    } finally {
      Object.assign(BULK_LOAD, saved[0]);
      Object.assign(IMPORT_BATCH, saved[1]);
      Object.assign(IMPORT_CHUNK, saved[2]);
    }
    assert.equal((await call(t, seeded.secret, 'GET', '/v1/contacts')).json().totalCount, N);
  });
});
