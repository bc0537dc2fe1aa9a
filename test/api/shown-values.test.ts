// Values quoted in error messages (docs/import.md §CSV), on both databases. A long value is shown
// by its first 20 and last 10 characters, counted as characters, never cutting one written in two
// UTF-16 units (an emoji): a cut one was a lone surrogate in the API's JSON error, which strict
// JSON readers refuse.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

eachDialect('values quoted in error messages', (ctx) => {
  test('a long value is cut between characters, never inside one', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
    const refused = async (label: string): Promise<string> => {
      const res = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A', tier: label } });
      assert.equal(res.statusCode, 400, res.body);
      const message = res.json().error.message as string;
      assert.ok(message.isWellFormed(), JSON.stringify(message));
      return message;
    };
    // The 20th character is an emoji, two UTF-16 units: shown whole.
    const cut = await refused(`${'a'.repeat(19)}😀${'b'.repeat(30)}`);
    assert.equal(cut, `"${'a'.repeat(19)}😀…${'b'.repeat(10)}" is neither an option id nor the label of an option of tier.`);
    // 30 emoji are 30 characters (60 units): whole, as any value of at most 40.
    assert.equal(await refused('😀'.repeat(30)), `"${'😀'.repeat(30)}" is neither an option id nor the label of an option of tier.`);
    const ends = await refused(`${'😀'.repeat(25)}${'x'.repeat(9)}😀${'😀'.repeat(10)}`);
    assert.equal(ends, `"${'😀'.repeat(20)}…${'😀'.repeat(10)}" is neither an option id nor the label of an option of tier.`);
  });
});
