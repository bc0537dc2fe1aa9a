// A lost PostgreSQL connection (a restart, a failover, a proxy closing an idle connection): a read
// is sent once more on a new connection instead of failing, and a database that cannot be reached
// answers 503 service_unavailable, not 500 (docs/design.md §Database, docs/errors.md). SQLite is
// a file opened by the process: it has no connection to lose, so these run on PostgreSQL only.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import postgres from 'postgres';
import { isConnectionLoss } from '../../src/db/connection-loss.ts';
import { openDb } from '../../src/db/database.ts';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { createTestDb, testDialects } from '../helpers/db.ts';
import { write } from '../../src/db/write.ts';

/** Ends, from another connection, the backend of the connection that serves reads outside transactions. */
async function closeReadConnection(t: TestApp): Promise<void> {
  const db = t.deps.db.kysely;
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
  // A transaction has a connection of its own (src/db/postgres/connection.ts), so this is another backend.
  await write(db, (tx) => sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(tx));
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`a lost database connection [${dialect}]`, () => {
    test('reads whose connection was closed under them are answered from a new one', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const made = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Kept', $objectType: 'account' } });
        assert.equal(made.statusCode, 200, made.body);
        const id = made.json().id as string;
        // Each time, the request goes out right after the backend was told to end, while the
        // process may still take its connection for open: without the second try, most fail.
        for (let i = 0; i < 6; i++) {
          await closeReadConnection(t);
          const res = await call(t, s.secret, 'GET', i % 2 ? `/v1/lists/${id}` : '/v1/lists');
          assert.equal(res.statusCode, 200, `try ${i}: ${res.body}`);
        }
      } finally {
        await t.close();
      }
    });

    // postgres.js 3.4.9 wrote a statement under 1 KiB at the next setImmediate, and on a connection
    // closed meanwhile that write threw where nothing could catch it: the process died
    // (scripts/patch-postgres.mjs mends it at install).
    test('a statement on a held connection whose backend ended is refused, and the process lives on', async () => {
      const t = await createTestDb(dialect);
      const client = postgres(t.databaseUrl!, { max: 2, onnotice: () => {} });
      try {
        const held = await client.reserve();
        const [row] = await held<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await sql`select pg_terminate_backend(${row!.pid})`.execute(t.db.kysely);
        await wait(100);
        await assert.rejects(held`select 1`, (err: Error & { code?: string }) => err.code === 'CONNECTION_CLOSED');
        held.release();
        // The pool opens a new connection in its place.
        let answer: unknown;
        for (let i = 0; i < 3 && answer === undefined; i++)
          answer = await client`select 2 as two`.then(
            (r) => r[0],
            () => wait(50),
          );
        assert.deepEqual(answer, { two: 2 });
      } finally {
        await client.end();
        await t.drop();
      }
    });

    // Each connect waits for a timer, for the backoff after a lost connection: an end meanwhile
    // left it set, and it opened a connection that nothing ended and that kept the process alive
    // (scripts/patch-postgres.mjs mends it at install).
    test('a client ended while a connection waits to open again leaves no connection open', async () => {
      const t = await createTestDb(dialect);
      const name = `ended-${process.pid}-${Date.now()}`;
      const backends = async () =>
        Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity where application_name = ${name}`.execute(t.db.kysely)).rows[0]!.n);
      const client = postgres(t.databaseUrl!, { max: 1, backoff: () => 0.5, connection: { application_name: name }, onnotice: () => {} });
      try {
        await client`select 1`;
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`.execute(t.db.kysely);
        await wait(100);
        // This statement finds the connection closed: the client opens another after its backoff.
        const pending = client`select 2`.execute().then(
          () => 'answered',
          (err: Error & { code?: string }) => err.code,
        );
        await wait(50);
        await client.end({ timeout: 0 });
        assert.equal(await pending, 'CONNECTION_DESTROYED');
        await wait(1000);
        assert.equal(await backends(), 0, 'a connection opened after the end');
      } finally {
        await client.end();
        await t.drop();
      }
    });

    test('a transaction whose connection was closed under it fails as a lost connection, then the next one commits', async () => {
      const t = await createTestDb(dialect);
      const db = t.db.kysely;
      try {
        const failed = await write(db, async (tx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx);
          await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(db);
          await wait(100);
          await sql`select 1`.execute(tx);
        }).then(
          () => null,
          (err: unknown) => err,
        );
        assert.ok(isConnectionLoss(failed), `failed with ${String(failed)}`);
        let committed = false;
        for (let i = 0; i < 3 && !committed; i++) {
          committed = await write(db, (tx) => sql`select 1`.execute(tx)).then(
            () => true,
            (err: unknown) => (isConnectionLoss(err) ? wait(50).then(() => false) : Promise.reject(err as Error)),
          );
        }
        assert.ok(committed);
      } finally {
        await t.drop();
      }
    });

    test('a database that cannot be reached answers 503 service_unavailable with Retry-After', async () => {
      // Nothing listens on port 1: every connection is refused.
      const dead = openDb({ dataDir: '/nonexistent', databaseUrl: 'postgres://postgres@127.0.0.1:1/test' });
      const t = await buildTestApp(dialect, {
        deps: (deps) => {
          deps.db = dead;
          deps.auth = new Authenticator(dead);
        },
      });
      try {
        // A well-formed key: its lookup is the request's first statement.
        const res = await call(t, `rdx_abcdefgh_${'a'.repeat(43)}`, 'GET', '/v1/lists');
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.headers['retry-after'], '1');
        assert.equal(res.json().error.code, 'service_unavailable');
        assert.equal(res.json().error.type, 'service_unavailable');
      } finally {
        await t.close();
        await dead.close();
      }
    });
  });
}
