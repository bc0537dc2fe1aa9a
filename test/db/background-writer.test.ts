// Background work and SQLite's one writing connection (src/db/background.ts): a background write
// waits while another's is queued for the writer, runs at once when none is, and is not starved by
// a stream of writes that never pauses: it goes once it has waited BACKGROUND_WAIT.ms.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { BACKGROUND_WAIT, inBackground } from '../../src/db/background.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { write } from '../../src/db/write.ts';

describe('background writes on SQLite [sqlite]', () => {
  let tdb: TestDb;
  before(async () => {
    tdb = await createTestDb('sqlite');
    await sql`create table order_log (n integer primary key, who text not null)`.execute(tdb.db.kysely);
  });
  after(() => tdb.drop());

  const insert = (who: string) => sql`insert into order_log (who) values (${who})`.execute(tdb.db.kysely);
  const order = async () => (await sql<{ who: string }>`select who from order_log order by n`.execute(tdb.db.kysely)).rows.map((r) => r.who);
  const clear = () => sql`delete from order_log`.execute(tdb.db.kysely);

  /** A transaction that holds the writer until `release` is called. */
  function holdWriter(): { release: () => void; done: Promise<void> } {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const done = write(tdb.db.kysely, async (tx) => {
      await sql`insert into order_log (who) values ('holder')`.execute(tx);
      await held;
    });
    return { release, done };
  }

  test('a background write queued first goes after a request write queued behind it', async () => {
    await clear();
    const holder = holdWriter();
    await sleep(5);
    const background = inBackground(() => insert('background'));
    await sleep(5);
    const request = insert('request');
    holder.release();
    await Promise.all([holder.done, background, request]);
    assert.deepEqual(await order(), ['holder', 'request', 'background']);
  });

  test('a background write with nothing queued beside it runs at once', async () => {
    await clear();
    await inBackground(() => insert('background'));
    assert.deepEqual(await order(), ['background']);
  });

  test(`a stream of writes that never pauses lets a background write go after ${BACKGROUND_WAIT.ms} ms`, async () => {
    await clear();
    // Two writers in turn, each holding the writer 10 ms: one is always queued while the other writes.
    let stop = false;
    const stream = async (name: string) => {
      for (let i = 0; i < 200 && !stop; i++)
        await write(tdb.db.kysely, async (tx) => {
          await sql`insert into order_log (who) values (${name})`.execute(tx);
          await sleep(10);
        });
    };
    const streams = [stream('a'), stream('b')];
    await sleep(30);
    await inBackground(() => insert('background'));
    stop = true;
    await Promise.all(streams);
    const log = await order();
    const at = log.indexOf('background');
    assert.ok(at > 0 && at < log.length - 1, `the background write ran inside the stream: ${log.join(' ')}`);
  });
});
