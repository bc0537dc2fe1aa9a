// DATABASE_URL may name a Unix socket the way libpq does, `?host=<directory>` (as psql and pg read
// it): the server connects through that socket instead of sending `host` to PostgreSQL as a
// setting, which refused the connection (docs/deploy.md §Database connections).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/database.ts';
import { createTestDb, testDialects } from '../helpers/db.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  test(`DATABASE_URL with ?host=<socket directory> connects through the socket [${dialect}]`, async () => {
    const t = await createTestDb(dialect);
    try {
      const shown = await sql<{ unix_socket_directories: string }>`show unix_socket_directories`.execute(t.db.kysely);
      const dir = shown.rows[0]!.unix_socket_directories.split(',')[0]!.trim();
      const url = new URL(t.databaseUrl!);
      url.searchParams.set('host', dir);
      const db = openDb({ dataDir: t.dataDir, databaseUrl: url.toString() });
      try {
        const r = await sql<{ addr: string | null; schema: string }>`select inet_client_addr() as addr, current_schema() as schema`.execute(db.kysely);
        // A connection through a Unix socket has no client address.
        assert.deepEqual(r.rows[0], { addr: null, schema: t.schema });
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });
}
