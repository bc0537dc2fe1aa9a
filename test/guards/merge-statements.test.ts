// A merge moves its links and memberships in batches (docs/merge.md §Links, docs/performance.md
// §Merges in batches): the rows other records hold to the duplicate are retargeted and deleted with
// one statement each, a record's memberships leave with one delete and one member-count update,
// their lists' ranked member sets move with one statement per level across the lists
// (docs/pages.md §Changes across partitions), and the lists' member events are appended with one
// insert, whatever the number of lists. On PostgreSQL the reads that need no other's answer go
// out together, and nothing is read twice, so the merge's transaction waits for at most 16 round
// trips.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { transactionRoundTrips } from '../../src/db/postgres/connection.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { stepsOf } from '../helpers/sql-spy.ts';

eachDialect('merge statements', (ctx) => {
  test('a merge of two contacts in 12 lists, with 12 notes naming them: no statement per link or per list', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const contact = async (name: string) => {
      const r = await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: name, lastName: 'M' } } });
      assert.equal(r.statusCode, 200, r.body);
      return r.json().id as string;
    };
    const [a, b] = [await contact('a'), await contact('b')];
    for (let i = 0; i < 12; i++) {
      const members = i < 4 ? [a] : i < 8 ? [b] : [a, b];
      const list = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: `l${i}`, $objectType: 'contact' }, relationships: { $contacts: members } });
      assert.equal(list.statusCode, 200, list.body);
      const note = await call(t, s.secret, 'POST', '/v1/notes', { fields: { $title: `n${i}` }, relationships: { $contact: i < 6 ? [b] : [a, b] } });
      assert.equal(note.statusCode, 200, note.body);
    }
    const trips = transactionRoundTrips();
    const { result, steps } = await stepsOf(() => call(t, s.secret, 'POST', '/v1/contacts/merge', { primaryId: a, duplicateId: b }));
    const waited = transactionRoundTrips() - trips;
    assert.equal(result.statusCode, 200, result.body);
    const statements = steps.flat();
    const count = (re: RegExp) => statements.filter((x) => re.test(x)).length;
    // On PostgreSQL a single event goes out with its deliveries, the insert a CTE of that statement.
    assert.equal(count(/^(with inserted as \()?insert into "events"/), 2, 'the merged event; the members removed from 8 lists and added to 4');
    assert.equal(count(/^update "?entity_relationships"? set "?target_id/), 1, 'the notes naming only the duplicate');
    assert.equal(count(/^delete from "?entity_relationships"? where \(source_id/), 1, 'the notes naming both');
    assert.equal(count(/^delete from "list_members"/), 1);
    assert.equal(count(/^update "lists" set "member_count"/), 2, 'down for the duplicate’s 8 lists, up for the primary’s 4 new ones');
    // The lists' ranked member sets move across lists: a base row and one count update per level
    // for the 8 lists left, the same for the 4 joined, and the same for the contacts' listing.
    assert.equal(count(/^insert into rank_buckets/), 3, 'base rows: the lists left, the lists joined, the listing');
    assert.equal(count(/update rank_buckets set n = n \+/), 6, 'two levels each: the lists left, the lists joined, the listing');
    if (t.dialect === 'postgres') {
      // Reads go out together where none needs another's answer: both records in one read, their
      // links in one round trip, the held rows' three renames in one, the lists of both kinds of
      // member events read once; the trash takes the duplicate with the merge's definitions and
      // without looking for the memberships the merge moved (27 round trips before).
      const shown = JSON.stringify(steps.map((x) => x.at(-2) ?? x[0]));
      assert.ok(waited <= 16, `the merge's transaction waits for ${waited} round trips: ${shown}`);
      assert.equal(count(/^select \* from "entity_relationships"/), 2, 'the rows of both records and the rows held to them, two reads');
      assert.equal(count(/^select \* from "lists"/), 1, 'the lists of the member events, read once');
      assert.equal(count(/^select \* from "records"/), 1, 'both records, read once');
      // The lists to lock, locked by the read that finds them (docs/design.md §Database, "The
      // order of locks"); the memberships that move are those the delete under the locks returns.
      assert.equal(
        count(/^select "id" from "lists" where "id" in \(select "list_id" from "list_members" where "entity_id" = \$1\) order by "id" for key share$/),
        1,
        'the duplicate’s lists, read and locked once',
      );
      assert.equal(count(/^delete from "list_members" where "entity_id" = \$1 returning/), 1, 'the duplicate’s memberships, deleted once');
      assert.equal(count(/^select "version" from "definition_versions"/), 1, 'the definitions’ version, read once');
    }
    const page = (await call(t, s.secret, 'GET', `/v1/contacts/${a}`)).json();
    assert.equal(page.relationships.$note.values.length, 12);
  });
});
