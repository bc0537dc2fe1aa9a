// Definition writers at the same moment (docs/records.md §Definitions), on both databases: each
// checks what is taken (a key, an option label equal ignoring case and white space) and writes
// under the workspace's definitions lock, so of two operators (two CLI runs, a CLI run beside an
// import) adding one key or clashing labels at once, one is refused as if they had run one after
// the other, with the documented message rather than the database's own error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField, addOption, addRelationship, loadDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { InputError } from '../../src/lib/errors.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

/** The outcomes of writers started together: how many succeeded, and the messages of the refused. */
async function together(...writers: Array<() => Promise<unknown>>): Promise<{ ok: number; refused: string[] }> {
  const settled = await Promise.allSettled(writers.map((w) => w()));
  const refused = settled.flatMap((s) =>
    s.status === 'rejected' ? [s.reason instanceof InputError ? s.reason.message : `not an InputError: ${String(s.reason)}`] : [],
  );
  return { ok: settled.length - refused.length, refused };
}

eachDialect('definitions written at once', (ctx) => {
  test('two options whose labels differ only in case: one is added, the other refused', async () => {
    const t = ctx();
    const c = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
    await addField(c, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
    for (const n of [1, 2, 3]) {
      const got = await together(
        () => addOption(c, { objectType: 'account', fieldKey: 'tier', label: `Gold ${n}` }),
        () => addOption(c, { objectType: 'account', fieldKey: 'tier', label: `gold  ${n}` }),
      );
      assert.equal(got.ok, 1, JSON.stringify(got));
      assert.match(got.refused[0]!, /only in case or white space/);
      const same = await together(
        () => addOption(c, { objectType: 'account', fieldKey: 'tier', label: `Silver ${n}` }),
        () => addOption(c, { objectType: 'account', fieldKey: 'tier', label: `Silver ${n}` }),
      );
      assert.deepEqual(same, { ok: 1, refused: [`option "Silver ${n}" exists`] });
    }
    const labels = (await loadDefinitions(c, { objectType: 'account' }))!.fields.get('tier')!.options!.map((o) => o.label.toLowerCase().replace(/\s+/g, ' '));
    assert.equal(new Set(labels).size, labels.length, labels.join(', '));
  });

  test('one key taken twice, as two fields or as a field and a relationship: the second is refused', async () => {
    const t = ctx();
    const c = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
    for (const n of [1, 2, 3]) {
      const fields = await together(
        () => addField(c, { objectType: 'account', key: `code${n}`, label: 'Code', valueType: 'TEXT' }),
        () => addField(c, { objectType: 'account', key: `code${n}`, label: 'Code', valueType: 'NUMBER' }),
      );
      assert.deepEqual(fields, { ok: 1, refused: [`"code${n}" is already defined`] });
      const mixed = await together(
        () => addField(c, { objectType: 'account', key: `partner${n}`, label: 'Partner', valueType: 'TEXT' }),
        () => addRelationship(c, { objectType: 'account', key: `partner${n}`, label: 'Partner', cardinality: 'has_one', targetType: 'contact' }),
      );
      assert.deepEqual(mixed, { ok: 1, refused: [`"partner${n}" is already defined`] });
    }
    const defs = (await loadDefinitions(c, { objectType: 'account' }))!;
    for (const n of [1, 2, 3]) assert.equal(defs.fields.has(`partner${n}`) !== defs.relationships.has(`partner${n}`), true);
  });

  test('two CLI runs adding one option at once: one adds it, the other exits 1 naming it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId, '--type', 'account'];
    assert.equal((await rolodex(t, ['definition', 'add', ...ws, '--key', 'size', '--label', 'Size', '--value-type', 'SINGLE_SELECT'])).code, 0);
    const runs = await Promise.all(['Small', 'small'].map((label) => rolodex(t, ['definition', 'option', 'add', ...ws, '--field', 'size', '--label', label])));
    assert.deepEqual(runs.map((r) => r.code).sort(), [0, 1], JSON.stringify(runs));
    assert.match(runs.find((r) => r.code === 1)!.err, /only in case or white space/);
  });
});
