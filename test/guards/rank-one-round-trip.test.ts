// A create in a ranked set takes the scope's lock for one round trip on PostgreSQL (docs/pages.md
// §Keeping it exact): lock, row, counts and COMMIT go out in one write, and a leaf that grew past
// its maximum is split after COMMIT, in a transaction of its own. Tiny leaves make creates split.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { transactionRoundTrips } from '../../src/db/postgres/connection.ts';
import { LISTS } from '../../src/lists/repository.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { checkCreated, useRankSizes } from '../helpers/rank.ts';

/** The transaction round trips of each of `n` requests made one after another, each answered 200. */
async function roundTripsOf(n: number, request: (i: number) => Promise<{ statusCode: number; body: string }>): Promise<number[]> {
  const trips: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = transactionRoundTrips();
    const r = await request(i);
    assert.equal(r.statusCode, 200, r.body);
    trips.push(transactionRoundTrips() - before);
  }
  return trips;
}

eachDialect('ranked creates in one round trip', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
  test('POST /v1/lists: one round trip on PostgreSQL, leaves split after COMMIT, counts and pages exact', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const trips = await roundTripsOf(40, (i) => call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: `l${i}`, $objectType: 'account' } }));
    if (t.deps.db.dialect === 'postgres') {
      // A split's upkeep transaction runs after its create's answer, and may fall in the next create's count.
      assert.equal(trips.filter((n) => n === 1).length >= 30, true, `round trips per create: ${trips.join(',')}`);
      assert.equal(Math.min(...trips), 1);
    }
    await checkCreated(t.deps.db.kysely, LISTS, [s.workspaceId], 40);
    const page = (await call(t, s.secret, 'GET', '/v1/lists?limit=25&offset=15')).json();
    assert.equal(page.totalCount, 40);
    assert.equal(page.data.length, 25);
  });

  // A new contact's notes (its inverse `$note`) are known to be none: not read.
  test('POST /v1/contacts: three round trips on PostgreSQL (the definitions, then every write with the read of its meetings, then COMMIT)', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const trips = await roundTripsOf(40, (i) =>
      call(t, s.secret, 'POST', '/v1/contacts', {
        fields: { $name: { firstName: 'Ada', lastName: `L${i}` }, $email: [`ada${i}@example.test`], $profilePhotoUrl: `https://example.test/p/${i}.png` },
      }),
    );
    if (t.deps.db.dialect === 'postgres') {
      assert.equal(trips.filter((n) => n === 3).length >= 30, true, `round trips per create: ${trips.join(',')}`);
      assert.equal(Math.min(...trips), 3);
    }
    await checkCreated(t.deps.db.kysely, RECORDS, [s.workspaceId, 'contact'], 40);
    // What the deferred writes wrote: each contact found by its name, and by a part of its e-mail
    // and of its photo's URL (the postings).
    for (const q of [`$name=${encodeURIComponent('ada l7')}`, '$email=ada7@', `$profilePhotoUrl=${encodeURIComponent('/p/7.png')}`]) {
      const page = (await call(t, s.secret, 'GET', `/v1/contacts?${q}`)).json();
      assert.equal(page.totalCount, 1, q);
      assert.equal(page.data[0].fields.$name.value.lastName, 'L7');
    }
  });
});
