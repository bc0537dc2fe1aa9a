// displayValue of an ADDRESS in field history (docs/history.md §displayValue), on both databases:
// every part the address holds, the coordinates too, so that an address of coordinates alone is
// not answered as an empty text, which only a text reads as.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

eachDialect('history: ADDRESS display values', (ctx) => {
  test('the parts an address holds, in order, coordinates included', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ latitude: 52.5, longitude: 13.4 }, '52.5, 13.4'],
      [{ street: 'Main 1', city: 'Berlin', country: 'de', latitude: 0, longitude: -0.1275 }, 'Main 1, Berlin, DE, 0, -0.1275'],
      [{ street2: 'Floor 2', postalCode: '10115', state: 'BE' }, 'Floor 2, BE, 10115'],
    ];
    for (const [address, shown] of cases) {
      const made = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $primaryAddress: address } });
      assert.equal(made.statusCode, 200, made.body);
      const h = await call(t, s.secret, 'GET', `/v1/accounts/${made.json().id}/fields/$primaryAddress/history`);
      assert.equal(h.statusCode, 200, h.body);
      assert.deepEqual(
        h.json().data.map((e: { displayValue: string }) => e.displayValue),
        [shown],
        JSON.stringify(address),
      );
    }
  });
});
