// SQL of the import's writes of records (docs/import.md §Speed): upserts by externalId and a bulk
// load's plain inserts.
import { sql } from 'kysely';
import { chunks, deferred, deferredRows, insertRows, settled, type Tx } from '../db/index.ts';
import type { RecordRow } from './repository.ts';

/** The ids of the rows an upsert wrote: once its statements ran, or at once (undefined when they have not). */
export type Written = (wait: boolean) => Promise<Set<string> | undefined>;

/**
 * Inserts new records and overwrites the fields of existing ones (by workspace, kind and
 * externalId), only where the existing row has the id given: a row another writer gave the same
 * externalId is left as it is, and its id is missing from what `Written` returns.
 */
export async function upsertRecords(db: Tx, rows: RecordRow[]): Promise<Written> {
  // 7 values a row: 300 rows stay far below SQLite's and PostgreSQL's parameter limits.
  // Nothing reads them back before the next statement awaited: sent without waiting (src/db/pipeline.ts).
  const sent: { readonly rows?: { id: string }[] }[] = [];
  for (const part of chunks(rows, 300)) {
    sent.push(
      await deferredRows(
        db,
        db
          .insertInto('records')
          .values(part)
          .onConflict((oc) =>
            oc
              .columns(['workspace_id', 'kind', 'external_id'])
              .where('external_id', 'is not', null)
              .doUpdateSet({ fields: sql`excluded.fields`, updated_at: sql`excluded.updated_at` })
              .whereRef('records.id', '=', 'excluded.id'),
          )
          .returning('id'),
      ),
    );
  }
  return async (wait) => {
    if (sent.some((s) => s.rows === undefined)) {
      if (!wait) return undefined;
      await settled(db);
    }
    return new Set(sent.flatMap((s) => s.rows ?? []).map((r) => r.id));
  };
}

/** Overwrites the fields and updatedAt of existing records, by id (rows the import has locked). */
export async function updateRecordFields(db: Tx, rows: readonly RecordRow[]): Promise<void> {
  // Nothing reads their answer: sent with the next statement awaited (src/db/pipeline.ts).
  for (const r of rows) await deferred(db, db.updateTable('records').set({ fields: r.fields, updated_at: r.updated_at }).where('id', '=', r.id));
}

/** Inserts records known to be new (a bulk load's: docs/import.md §Speed) without Kysely's per-value building. */
export async function insertRecords(db: Tx, rows: RecordRow[]): Promise<void> {
  // 7 values a row.
  await insertRows(db, 'records', ['id', 'workspace_id', 'kind', 'external_id', 'fields', 'created_at', 'updated_at'], rows, 1000);
}

/**
 * Deletes the relationship rows of `sources` but their links to files, which a line that names no
 * relationship to files keeps (docs/import.md §Export: an export without `--files` writes none).
 */
export async function unlinkKeepingFiles(tx: Tx, sources: readonly string[]): Promise<void> {
  for (const part of chunks([...sources]))
    await deferred(tx, tx.deleteFrom('entity_relationships').where('source_id', 'in', part).where('object_type', '<>', 'file'));
}
