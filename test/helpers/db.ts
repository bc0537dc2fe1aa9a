// A fresh database per test suite: a temporary SQLite file, or a PostgreSQL schema of its own,
// so that test files can run in parallel.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { openDb } from '../../src/db/database.ts';
import type { DialectName, Db } from '../../src/db/types.ts';
import { MIGRATIONS, migrate } from '../../src/db/migrate.ts';
import { copySqliteTemplate, createSchemaFromTemplate } from './db-templates.ts';
import { IN_CI, services, TEST_DATABASE_URL } from './services.ts';

export interface TestDb {
  db: Db;
  dataDir: string;
  /** For a PostgreSQL test database, a connection string whose search_path is its schema. */
  databaseUrl?: string;
  schema?: string;
  /** Where a SQLite database lives. */
  sqliteFile?: string;
  drop(): Promise<void>;
}

/** The dialects this run can test: SQLite always; PostgreSQL when reachable (and always in CI). */
export function testDialects(): DialectName[] {
  return services().postgres || IN_CI ? ['sqlite', 'postgres'] : ['sqlite'];
}

export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/**
 * A fresh database, migrated unless `migrate: false`; with `before`, migrated only through the
 * migrations whose names sort below it (a migration's test starts from the schema before it).
 * Fully migrated, it is a copy of the run's template (db-templates.ts).
 */
export async function createTestDb(dialect: DialectName, opts: { migrate?: boolean; before?: string } = {}): Promise<TestDb> {
  const set = opts.before === undefined ? undefined : Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < opts.before!));
  const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-test-'));
  if (dialect === 'sqlite') {
    const sqliteFile = join(dataDir, 'rolodex.db');
    const copied = set === undefined && opts.migrate !== false && copySqliteTemplate(sqliteFile);
    const db = openDb({ dataDir, sqliteFile });
    if (opts.migrate !== false && !copied) await migrate(db, set);
    return {
      db,
      dataDir,
      sqliteFile,
      drop: async () => {
        await db.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  const copied = set === undefined && opts.migrate !== false && (await createSchemaFromTemplate(admin, schema));
  if (!copied) await admin.query(`create schema ${schema}`);
  await admin.end();
  const db = openDb({ dataDir, databaseUrl: TEST_DATABASE_URL, schema });
  if (opts.migrate !== false && !copied) await migrate(db, set);
  // A copy opens no connection: one is opened now, as migrating did, so that a test's first
  // statement does not also wait for a connection (and, on a loaded machine, a probe's bound).
  else if (copied) await sql`select 1`.execute(db.kysely);
  return {
    db,
    dataDir,
    databaseUrl: withSearchPath(TEST_DATABASE_URL, schema),
    schema,
    drop: async () => {
      await db.close();
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
