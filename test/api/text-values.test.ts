// Text as integrators in other countries and scripts send it, through the API on both databases:
// a telephone number has one stored form whatever digits and invisible marks it was written with
// (docs/records.md §Telephone numbers), and a query string is percent-encoded UTF-8 or refused
// (docs/errors.md §Query parameters).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('text values', (ctx) => {
  async function write(s: Seeded, body: unknown) {
    return call(ctx(), s.secret, 'POST', '/v1/accounts', body);
  }
  async function found(s: Seeded, key: string, value: string): Promise<string[]> {
    const res = await call(ctx(), s.secret, 'GET', `/v1/accounts?${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.map((d: { id: string }) => d.id);
  }

  test("a telephone extension written in another script's digits is stored in ASCII digits, one value for unique and filters", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'phone', label: 'Phone', valueType: 'TELEPHONE', unique: true });
    // Arabic-Indic and Extended Arabic-Indic digits, as a phone's keyboard in Egypt or Iran types them.
    const made = await write(s, { fields: { $name: 'A', phone: '+٤٩ ٣٠ ١٢٣٤٥٦٧ ext. ١٢' } });
    assert.equal(made.statusCode, 200, made.body);
    assert.equal(made.json().fields.phone.value, '+49301234567;ext=12');
    const persian = await write(s, { fields: { $name: 'B', phone: '+49 30 1234567 x۱۲' } });
    assert.equal(persian.statusCode, 409, persian.body);
    assert.deepEqual([persian.json().error.code, persian.json().error.param], ['duplicate_value', 'fields.phone']);
    assert.deepEqual(await found(s, 'phone', '+49 30 1234567 ext. 12'), [made.json().id]);
    assert.deepEqual(await found(s, 'phone[contains]', 'ext=12'), [made.json().id]);
  });
});
