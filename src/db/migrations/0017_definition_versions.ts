import { type Kysely, sql } from 'kysely';

// A version of each workspace's definitions, moved by the database itself whenever a row of
// custom fields, options, relationships or object types is inserted, updated or deleted, whoever
// writes it (the CLI, an import, a migration, another process). Servers cache the definitions
// they build per workspace and type and use them only while the version they were built under is
// still the workspace's (docs/records.md §Definitions). A workspace without a row is at version 0.
const TABLES = ['field_definitions', 'select_options', 'relationship_definitions', 'object_types'];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('definition_versions')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  const bump = (ws: string) =>
    `insert into definition_versions (workspace_id, version) values (${ws}, 1)
       on conflict (workspace_id) do update set version = definition_versions.version + 1`;
  if (sql`${0}`.compile(db).sql === '$1') {
    await sql
      .raw(
        `create function bump_definition_version() returns trigger language plpgsql as $$
         begin
           if tg_op = 'DELETE' then ${bump('old.workspace_id')}; return old; end if;
           ${bump('new.workspace_id')};
           if tg_op = 'UPDATE' and old.workspace_id <> new.workspace_id then ${bump('old.workspace_id')}; end if;
           return new;
         end $$`,
      )
      .execute(db);
    for (const table of TABLES)
      await sql
        .raw(`create trigger ${table}_version after insert or update or delete on ${table} for each row execute function bump_definition_version()`)
        .execute(db);
    return;
  }
  for (const table of TABLES) {
    await sql.raw(`create trigger ${table}_version_insert after insert on ${table} begin ${bump('new.workspace_id')}; end`).execute(db);
    await sql
      .raw(`create trigger ${table}_version_update after update on ${table} begin ${bump('new.workspace_id')}; ${bump('old.workspace_id')}; end`)
      .execute(db);
    await sql.raw(`create trigger ${table}_version_delete after delete on ${table} begin ${bump('old.workspace_id')}; end`).execute(db);
  }
}
