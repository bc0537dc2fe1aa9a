// A batched import's chunks each use the type's definitions as they are when the chunk is written
// (docs/import.md §Sharing the database, `batched`), on both databases: an operator's
// `rolodex definition unarchive` or `definition option add` between two chunks holds for every
// later chunk, as it holds for the server's next request. Checked with the contacts' kind wrapped
// so that the operator acts just before the import's second chunk.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { IMPORT_CHUNK, ImportFailed, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

/** The import's kinds, the contacts' running `before` once, just before their second chunk. */
function kindsWithHook(before: () => Promise<void>): ImportKind[] {
  let chunks = 0;
  return importKinds().map((k) =>
    k.object !== 'contact'
      ? k
      : {
          ...k,
          prepare: async (ctx, items) => {
            if (++chunks === 2) await before();
            return k.prepare ? k.prepare(ctx, items) : { undo: async () => {} };
          },
        },
  );
}

/** 20 contacts c-0 … c-19 imported batched, in a first chunk of 4; the error, if it failed. */
async function importBatched(t: TestApp, s: Seeded, line: (i: number) => object, before: () => Promise<void>): Promise<unknown> {
  const saved = IMPORT_CHUNK.batched;
  IMPORT_CHUNK.batched = 4;
  try {
    const text = Array.from({ length: 20 }, (_, i) => JSON.stringify({ object: 'contact', externalId: `c-${i}`, ...line(i) })).join('\n');
    await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: kindsWithHook(before), text, commit: 'batched' });
    return undefined;
  } catch (err) {
    return err;
  } finally {
    IMPORT_CHUNK.batched = saved;
  }
}

async function cli(t: TestApp, ...args: string[]): Promise<void> {
  const r = await rolodex(t, args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
}

const name = (i: number) => ({ $name: { value: { firstName: 'Ann', lastName: `Lee${i}` } } });

eachDialect('a batched import beside an operator correcting definitions', (ctx) => {
  async function contacts(s: Seeded, query = ''): Promise<{ fields: Record<string, { value: unknown }> }[]> {
    const r = await call(ctx(), s.secret, 'GET', `/v1/contacts?limit=25${query}`);
    assert.equal(r.statusCode, 200, r.body);
    return r.json().data;
  }

  test('a field unarchived between chunks: every record holding it is found by its filter', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId, '--type', 'contact'];
    await cli(t, 'definition', 'add', ...ws, '--key', 'tier', '--label', 'Tier', '--value-type', 'TEXT');
    await cli(t, 'definition', 'archive', ...ws, '--key', 'tier');
    // An export's lines: the archived field's values under archivedFields.
    const failed = await importBatched(
      t,
      s,
      (i) => ({ fields: name(i), archivedFields: { tier: { value: 'gold' } } }),
      () => cli(t, 'definition', 'unarchive', ...ws, '--key', 'tier'),
    );
    const holding = (await contacts(s)).filter((c) => c.fields.tier !== undefined);
    assert.equal((await contacts(s, '&tier[equal]=gold')).length, holding.length);
    // The second chunk finds tier shown, no longer archived: refused on its first line, as the
    // first chunk would have refused it; the first chunk stays.
    assert.ok(failed instanceof ImportFailed, String(failed));
    assert.equal(failed.committed, true);
    assert.match(failed.message, /^line 5: archivedFields\.tier: is not an archived field of contact; it is shown, and its values go under fields$/);
    assert.equal(holding.length, 4);
  });

  test('an option added between chunks is taken by the later chunks', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId, '--type', 'contact'];
    await cli(t, 'definition', 'add', ...ws, '--key', 'size', '--label', 'Size', '--value-type', 'SINGLE_SELECT');
    await cli(t, 'definition', 'option', 'add', ...ws, '--field', 'size', '--label', 'Small');
    const failed = await importBatched(
      t,
      s,
      (i) => ({ fields: { ...name(i), size: { value: i < 4 ? 'Small' : 'Large' } } }),
      () => cli(t, 'definition', 'option', 'add', ...ws, '--field', 'size', '--label', 'Large'),
    );
    assert.equal(failed, undefined, String(failed));
    assert.equal((await contacts(s, '&size=Small')).length, 4);
    assert.equal((await contacts(s, '&size=Large')).length, 16);
  });
});
