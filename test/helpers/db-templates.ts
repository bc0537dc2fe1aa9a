// Migrated once per run, copied for each test database (every test file builds fresh ones, a
// SQLite file or a PostgreSQL schema). The global setup migrates one of each as createTestDb
// would and keeps it: the SQLite file to copy, and the PostgreSQL schema as pg_dump writes it,
// replayed under each test schema's name in one round trip. A test of the migrations themselves
// (a `before` set, or none) still runs them (createTestDb), and so does every PostgreSQL test
// database where pg_dump is missing or fails.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDb } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

const ENV = 'ROLODEX_TEST_TEMPLATES';
/** Stands for the test schema's name in the PostgreSQL script. */
const NAME = '__rolodex_test_schema__';

interface Templates {
  dir: string;
  sqliteFile: string;
  /** Absent where PostgreSQL is not there or pg_dump fails: each schema is then migrated. */
  postgresScript?: string;
}

/** Builds the templates in the global setup and hands their paths to the test processes. */
export async function buildTemplates(databaseUrl: string | undefined): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-templates-'));
  const sqliteFile = join(dir, 'template.db');
  const sqlite = openDb({ dataDir: dir, sqliteFile });
  await migrate(sqlite);
  // Closing the last connection copies the write-ahead log into the file and removes it.
  await sqlite.close();
  const templates: Templates = { dir, sqliteFile };
  if (databaseUrl !== undefined) {
    const script = await dumpMigratedSchema(databaseUrl);
    if (script !== undefined) {
      templates.postgresScript = join(dir, 'template.sql');
      writeFileSync(templates.postgresScript, script);
    }
  }
  process.env[ENV] = JSON.stringify(templates);
}

export function removeTemplates(): void {
  const t = published();
  if (t) rmSync(t.dir, { recursive: true, force: true });
}

function published(): Templates | undefined {
  const raw = process.env[ENV];
  return raw ? (JSON.parse(raw) as Templates) : undefined;
}

async function dumpMigratedSchema(databaseUrl: string): Promise<string | undefined> {
  const schema = `rolodex_template_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const db = openDb({ dataDir: tmpdir(), databaseUrl, schema });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  try {
    const args = ['--schema', schema, '--inserts', '--no-owner', '--no-privileges', '--dbname', databaseUrl];
    const dump = execFileSync('pg_dump', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    // psql's own commands (\restrict…) are not SQL; the name is unique to this run.
    return dump
      .split('\n')
      .filter((line) => !line.startsWith('\\'))
      .join('\n')
      .replaceAll(schema, NAME);
  } catch (err) {
    // Slower, not wrong: each schema is then migrated. Said once, since it costs minutes a run.
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    const why = e.code === 'ENOENT' ? 'not installed' : (e.stderr?.trim().split('\n')[0] ?? e.message);
    process.stderr.write(`pg_dump: ${why}; every PostgreSQL test schema is migrated instead of copied\n`);
    return undefined;
  } finally {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}

/** Copies the migrated SQLite file to `file`; false where no template was built. */
export function copySqliteTemplate(file: string): boolean {
  const t = published();
  if (!t) return false;
  copyFileSync(t.sqliteFile, file);
  return true;
}

let script: string | undefined;

/** Creates `schema` as the migrations leave it; false where no template was built. */
export async function createSchemaFromTemplate(client: pg.Client, schema: string): Promise<boolean> {
  const path = published()?.postgresScript;
  if (!path) return false;
  script ??= readFileSync(path, 'utf8');
  await client.query(script.replaceAll(NAME, schema));
  return true;
}
