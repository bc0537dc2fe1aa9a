// One forward-only migration set for both dialects, compiled into the code (no directory scan),
// applied at start-up and by `rolodex migrate`.
import { inspect } from 'node:util';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import { type Kysely, sql } from 'kysely';
import { noteMigration } from './migration-notes.ts';
import { namesIn, RUN_BESIDE_TABLE } from './run-beside.ts';
import { migratorDb } from './migrator-catalogue.ts';
import type { Db } from './types.ts';
import * as m0001 from './migrations/0001_foundation.ts';
import * as m0002 from './migrations/0002_lists.ts';
import * as m0003 from './migrations/0003_messages.ts';
import * as m0004 from './migrations/0004_files.ts';
import * as m0005 from './migrations/0005_rank.ts';
import * as m0006 from './migrations/0006_platform.ts';
import * as m0007 from './migrations/0007_records.ts';
import * as m0008 from './migrations/0008_records_data.ts';
import * as m0009 from './migrations/0009_message_rank.ts';
import * as m0010 from './migrations/0010_emails.ts';
import * as m0011 from './migrations/0011_meetings.ts';
import * as m0012 from './migrations/0012_filter_index.ts';
import * as m0013 from './migrations/0013_objects.ts';
import * as m0014 from './migrations/0014_definition_order.ts';
import * as m0016 from './migrations/0016_value_probe.ts';
import * as m0017 from './migrations/0017_definition_versions.ts';
import * as m0018 from './migrations/0018_compact_trigrams.ts';
import * as m0021 from './migrations/0021_rank_clustered.ts';
import * as m0022 from './migrations/0022_rank_deltas.ts';
import * as m0023 from './migrations/0023_partial_num_index.ts';
import * as m0024 from './migrations/0024_trigram_packs.ts';
import * as m0025 from './migrations/0025_leaner_indexes.ts';
import * as m0030 from './migrations/0030_trash.ts';
import * as m0031 from './migrations/0031_merges.ts';
import * as m0040 from './migrations/0040_change_log.ts';
import * as m0055 from './migrations/0055_default_country.ts';
import * as m0056 from './migrations/0056_value_forms.ts';
import * as m0060 from './migrations/0060_enrichment_runs.ts';
import * as m0061 from './migrations/0061_delivery_order.ts';
import * as m0062 from './migrations/0062_record_facets.ts';
import * as m0063 from './migrations/0063_enrichment_cursor.ts';
import * as m0064 from './migrations/0064_relationship_target_estimate.ts';
import * as m0065 from './migrations/0065_change_log_pages.ts';
import * as m0066 from './migrations/0066_value_text_code_points.ts';
import * as m0067 from './migrations/0067_list_external_ids.ts';
import * as m0068 from './migrations/0068_meeting_external_ids.ts';
import * as m0069 from './migrations/0069_record_external_ids_partial.ts';
import * as m0070 from './migrations/0070_delivery_probe.ts';
import * as m0071 from './migrations/0071_final_sigma.ts';
import * as m0072 from './migrations/0072_delivery_parked.ts';
import * as m0073 from './migrations/0073_file_parents.ts';
import * as m0074 from './migrations/0074_url_forms.ts';
import * as m0075 from './migrations/0075_message_file_parents.ts';
import * as m0076 from './migrations/0076_trash_transcripts.ts';
import * as m0077 from './migrations/0077_run_beside.ts';
import * as m0078 from './migrations/0078_email_keys.ts';
import * as m0079 from './migrations/0079_email_characters.ts';
import * as m0080 from './migrations/0080_user_email_keys.ts';
import * as m0081 from './migrations/0081_delivery_queue.ts';
import * as m0082 from './migrations/0082_file_bytes_changed.ts';
import * as m0083 from './migrations/0083_rooted_domains.ts';
import * as m0084 from './migrations/0084_trash_merged.ts';

export const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_lists': m0002,
  '0003_messages': m0003,
  '0004_files': m0004,
  '0005_rank': m0005,
  '0006_platform': m0006,
  '0007_records': m0007,
  '0008_records_data': m0008,
  '0009_message_rank': m0009,
  '0010_emails': m0010,
  '0011_meetings': m0011,
  '0012_filter_index': m0012,
  '0013_objects': m0013,
  '0014_definition_order': m0014,
  '0016_value_probe': m0016,
  '0017_definition_versions': m0017,
  '0018_compact_trigrams': m0018,
  '0021_rank_clustered': m0021,
  '0022_rank_deltas': m0022,
  '0023_partial_num_index': m0023,
  '0024_trigram_packs': m0024,
  '0025_leaner_indexes': m0025,
  '0030_trash': m0030,
  '0031_merges': m0031,
  '0040_change_log': m0040,
  '0055_default_country': m0055,
  '0056_value_forms': m0056,
  '0060_enrichment_runs': m0060,
  '0061_delivery_order': m0061,
  '0062_record_facets': m0062,
  '0063_enrichment_cursor': m0063,
  '0064_relationship_target_estimate': m0064,
  '0065_change_log_pages': m0065,
  '0066_value_text_code_points': m0066,
  '0067_list_external_ids': m0067,
  '0068_meeting_external_ids': m0068,
  '0069_record_external_ids_partial': m0069,
  '0070_delivery_probe': m0070,
  '0071_final_sigma': m0071,
  '0072_delivery_parked': m0072,
  '0073_file_parents': m0073,
  '0074_url_forms': m0074,
  '0075_message_file_parents': m0075,
  '0076_trash_transcripts': m0076,
  '0077_run_beside': m0077,
  '0078_email_keys': m0078,
  '0079_email_characters': m0079,
  '0080_user_email_keys': m0080,
  '0081_delivery_queue': m0081,
  '0082_file_bytes_changed': m0082,
  '0083_rooted_domains': m0083,
  '0084_trash_merged': m0084,
};

export class MigrationError extends Error {
  override name = 'MigrationError';
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : typeof err === 'string' ? err : inspect(err);
}

/**
 * The database holds migrations this version does not know: a newer release migrated it. This
 * version runs on it, applying nothing and noting so, only when it holds every migration this
 * version knows and each unknown one is listed as one older releases run beside (a rolling deploy,
 * a rollback: docs/deploy.md §Migrations, src/db/run-beside.ts). Otherwise it stops with one line:
 * the schema is not this version's, or this version's writes would leave it wrong.
 */
function ahead(applied: Applied, unknown: readonly string[], migrations: Record<string, Migration>): string[] {
  const pending = Object.keys(migrations).filter((name) => !applied.executed.has(name));
  if (pending.length > 0)
    throw new MigrationError(
      `the database has migrations this version does not know (${unknown.join(', ')}) and lacks some it has (${pending.join(', ')}): run the version that migrated it`,
    );
  const blocking = unknown.filter((name) => !applied.runBeside.has(name));
  if (blocking.length > 0)
    throw new MigrationError(
      `the database was migrated by a newer version (${blocking.join(', ')}) that this version cannot run beside: run that version or a newer one`,
    );
  noteMigration({
    migration: unknown.at(-1) as string,
    message: `the database was migrated by a newer version (${unknown.join(', ')}); this version applies nothing and runs on it`,
    counts: {},
  });
  return [];
}

interface Applied {
  /** The names of the migrations applied: none before the first migration. */
  executed: Set<string>;
  /** The migrations older releases run beside (src/db/run-beside.ts). */
  runBeside: Set<string>;
}

async function appliedNames(db: Db, kysely: Kysely<any>): Promise<Applied> {
  const tables = new Set((await kysely.introspection.getTables({ withInternalKyselyTables: true })).map((t) => t.name));
  const named = async (name: string) => (tables.has(name) ? namesIn(db.kysely, db.schema ? `${db.schema}.${name}` : name) : new Set<string>());
  return { executed: await named('kysely_migration'), runBeside: await named(RUN_BESIDE_TABLE) };
}

/** What the database in use holds of rolodex, before anything is migrated (schemaHeld). */
export interface SchemaHeld {
  /**
   * PostgreSQL: the schema in use, as the URL names it, else the connection's current schema,
   * else its search_path (none of which exists). Undefined on SQLite, whose file is the database.
   */
  schema?: string;
  /** Whether that schema exists (on SQLite, always: opening the file made it). */
  exists: boolean;
  /** Whether it holds applied migrations: false for a schema that migrate() would create or fill. */
  migrated: boolean;
}

/**
 * What the database holds before migrate() runs: a command that does not create the database
 * refuses one without migrations rather than migrate a mistyped schema into a new empty one
 * (docs/cli.md §What creates the database). Reads the catalogue only; creates nothing.
 */
export async function schemaHeld(db: Db): Promise<SchemaHeld> {
  const kysely = migratorDb(db.kysely, db.dialect, db.schema);
  const migrated = (await appliedNames(db, kysely)).executed.size > 0;
  if (db.dialect !== 'postgres') return { exists: true, migrated };
  if (db.schema !== undefined) return { schema: db.schema, exists: (await kysely.introspection.getSchemas()).length > 0, migrated };
  const { rows } = await sql<{ current: string | null; path: string }>`select current_schema() as current, current_setting('search_path') as path`.execute(
    db.kysely,
  );
  const { current, path } = rows[0]!;
  return { schema: current ?? path, exists: current !== null, migrated };
}

/** Applies `migrations` (all of them unless a test names an earlier set) that are not applied yet. */
export async function migrate(db: Db, migrations: Record<string, Migration> = MIGRATIONS): Promise<string[]> {
  const kysely = migratorDb(db.kysely, db.dialect, db.schema);
  const applied = await appliedNames(db, kysely);
  const unknown = [...applied.executed].filter((name) => !Object.hasOwn(migrations, name)).sort();
  if (unknown.length > 0) return ahead(applied, unknown, migrations);
  // Every migration applied: there is nothing to apply, so Kysely's migrator (which looks for its
  // tables, takes its lock and reads them again) is not started. Every command and start passes here.
  if (Object.keys(migrations).every((name) => applied.executed.has(name))) return [];
  const migrator = new Migrator({
    db: kysely,
    provider: { getMigrations: async () => migrations },
    // Its own tables go to the schema in use, which is all of the catalogue it sees (migratorDb).
    ...(db.schema ? { migrationTableSchema: db.schema } : {}),
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  const failed = result.results?.find((r) => r.status === 'Error');
  if (result.error || failed) {
    const cause = result.error === undefined ? '' : describe(result.error);
    // An error before any migration ran (the migrator's own tables) names none.
    throw new MigrationError(`${failed ? `migration ${failed.migrationName}` : 'migrating'} failed: ${cause}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
