// Where an import's chunks begin and end changes no outcome (docs/import.md §`user`, §Rules, Unique
// fields): its lines are judged in file order, so an address or a unique value that an earlier line
// gives up is free for a later line, and one that a later line gives up is still held for an
// earlier line. Each file is imported into a workspace of its own with every chunk size the tests
// can force (one chunk; one object a chunk), atomic and batched, on both databases, and gives the
// same answer each time.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { IMPORT_CHUNK } from '../../src/import/run.ts';
import { call, eachDialect, seedWorkspace, type Seeded, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const user = (externalId: string, email: string) => ({ object: 'user', externalId, email, name: externalId });
const CODE = { object: 'definition', definition: 'field', objectType: 'contact', key: 'code', label: 'Code', valueType: 'TEXT', unique: true };
const contact = (externalId: string, code: string) => ({
  object: 'contact',
  externalId,
  fields: { $name: { value: { firstName: 'Ann', lastName: externalId }, valueType: 'FULL_NAME' }, code: { value: code, valueType: 'TEXT' } },
});

/** Chunk sizes by mode: every line in one chunk, or one line a chunk (a batched chunk grows from its first). */
const LAYOUTS = [
  { commit: 'atomic', chunk: 1000 },
  { commit: 'atomic', chunk: 1 },
  { commit: 'batched', chunk: 1000 },
  { commit: 'batched', chunk: 1 },
] as const;

async function importLines(t: TestApp, s: Seeded, name: string, lines: object[], commit: string) {
  const file = join(t.tdb.dataDir, `${name}-${s.workspaceId}.ndjson`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return rolodex(t, ['import', '--workspace', s.workspaceId, file, '--commit', commit]);
}

/**
 * `lines` imported with each layout into a new workspace that `seed` filled first: the exit code
 * and the error line of each, and what `read` finds after it, which every layout must agree on.
 */
async function eachLayout(
  t: TestApp,
  seed: object[],
  lines: object[],
  read: (s: Seeded) => Promise<unknown>,
): Promise<{ code: number; err: string; after: unknown }> {
  const results: { layout: string; code: number; err: string; after: unknown }[] = [];
  const saved = { ...IMPORT_CHUNK };
  for (const { commit, chunk } of LAYOUTS) {
    const s = await seedWorkspace(t);
    const seeded = await importLines(t, s, 'seed', seed, 'atomic');
    assert.equal(seeded.code, 0, seeded.err);
    IMPORT_CHUNK[commit] = chunk;
    try {
      const r = await importLines(t, s, 'lines', lines, commit);
      // The report's line that names the refused line (a batched import says what it kept above it).
      const err = r.err.split('\n').find((l) => l.startsWith('line ')) ?? r.err;
      results.push({ layout: `${commit}, chunks of ${chunk}`, code: r.code, err, after: await read(s) });
    } finally {
      Object.assign(IMPORT_CHUNK, saved);
    }
  }
  const [first] = results;
  for (const r of results)
    assert.deepEqual({ code: r.code, err: r.err, after: r.after }, { code: first!.code, err: first!.err, after: first!.after }, r.layout);
  return first!;
}

async function emails(t: TestApp, s: Seeded): Promise<string[]> {
  const list = await rolodex(t, ['user', 'list', '--workspace', s.workspaceId, '--json']);
  return (JSON.parse(list.out) as { email: string }[])
    .map((u) => u.email)
    .filter((e) => e.endsWith('@acme.test'))
    .sort();
}

async function codes(t: TestApp, s: Seeded): Promise<string[]> {
  const r = await call(t, s.secret, 'GET', '/v1/contacts?limit=25');
  assert.equal(r.statusCode, 200, r.body);
  return (r.json().data as Array<{ externalId: string; fields: { code?: { value: string | null } } }>)
    .map((c) => `${c.externalId}=${c.fields.code?.value ?? ''}`)
    .sort();
}

eachDialect('import: lines judged in file order whatever the chunks', (ctx) => {
  const seedUsers = [user('e-1', 'eve@acme.test'), user('e-2', 'bob@acme.test')];

  test('an address an earlier line leaves is free for a later new user, one a later line leaves still held', async () => {
    const t = ctx();
    const freed = await eachLayout(t, seedUsers, [user('e-1', 'eve.new@acme.test'), user('u-1', 'eve@acme.test')], (s) => emails(t, s));
    assert.equal(freed.code, 0, freed.err);
    assert.deepEqual(freed.after, ['bob@acme.test', 'eve.new@acme.test', 'eve@acme.test']);

    const held = await eachLayout(t, seedUsers, [user('u-1', 'eve@acme.test'), user('e-1', 'eve.new@acme.test')], (s) => emails(t, s));
    assert.equal(held.code, 1);
    assert.equal(held.err, 'line 1: email: another user of the workspace has the email "eve@acme.test"');
    assert.deepEqual(held.after, ['bob@acme.test', 'eve@acme.test']);
  });

  test('the first line that takes a held address is the one refused, whichever kind of line comes after', async () => {
    const t = ctx();
    // Line 1 takes eve's address, which line 2 leaves later; line 3 then gives it to bob.
    const lines = [user('u-1', 'eve@acme.test'), user('e-1', 'eve.new@acme.test'), user('e-2', 'eve@acme.test')];
    const r = await eachLayout(t, seedUsers, lines, (s) => emails(t, s));
    assert.equal(r.code, 1);
    assert.equal(r.err, 'line 1: email: another user of the workspace has the email "eve@acme.test"');
  });

  const seedContacts = [CODE, contact('c-1', 'A-1'), contact('c-2', 'B-1')];

  test('a unique value an earlier line gives up is free for a later line, one a later line gives up still held', async () => {
    const t = ctx();
    const freed = await eachLayout(t, seedContacts, [contact('c-1', 'X-1'), contact('c-3', 'a-1')], (s) => codes(t, s));
    assert.equal(freed.code, 0, freed.err);
    assert.deepEqual(freed.after, ['c-1=X-1', 'c-2=B-1', 'c-3=a-1']);

    const held = await eachLayout(t, seedContacts, [contact('c-3', 'a-1'), contact('c-1', 'X-1')], (s) => codes(t, s));
    assert.equal(held.code, 1);
    assert.equal(held.err, 'line 1: fields.code.value: "a-1": another contact already holds it; "code" is unique');
    assert.deepEqual(held.after, ['c-1=A-1', 'c-2=B-1']);

    // Two records that swap their values: the first line takes a value the second still holds.
    const swapped = await eachLayout(t, seedContacts, [contact('c-1', 'B-1'), contact('c-2', 'A-1')], (s) => codes(t, s));
    assert.equal(swapped.code, 1);
    assert.equal(swapped.err, 'line 1: fields.code.value: "B-1": another contact already holds it; "code" is unique');
  });

  test('the first refused line is named, whichever rule refuses a later one', async () => {
    const t = ctx();
    // Line 1 takes a value c-2 holds; lines 2 and 3 give one value twice.
    const lines = [contact('c-3', 'b-1'), contact('c-4', 'Z-1'), contact('c-5', 'z-1')];
    const r = await eachLayout(t, seedContacts, lines, (s) => codes(t, s));
    assert.equal(r.code, 1);
    assert.equal(r.err, 'line 1: fields.code.value: "b-1": another contact already holds it; "code" is unique');

    // Line 2's value is not one its field takes: line 1 is still the one named.
    const typed = { ...contact('c-4', 'Z-1'), fields: { code: { value: 'Z-1', valueType: 'NUMBER' } } };
    const mixed = await eachLayout(t, seedContacts, [contact('c-3', 'b-1'), typed], (s) => codes(t, s));
    assert.equal(mixed.code, 1);
    assert.equal(mixed.err, 'line 1: fields.code.value: "b-1": another contact already holds it; "code" is unique');
  });
});
