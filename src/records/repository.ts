// SQL of records and their relationships: the reads behind list memberships and the writes of
// import.
import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { insertRows } from '../db/insert-rows.ts';
import { defineRank } from '../db/rank.ts';
import type { Executor } from '../db/types.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import { replaceTrigrams } from '../filters/repository.ts';
import { lookupExternalIds } from '../import/repository.ts';
import { foldText } from '../lib/fold.ts';
import type { EntityRelationshipsTable, RecordValuesTable, RecordsTable } from './tables.ts';

export type RecordRow = RecordsTable;

/** Records of one type in one workspace, newest first (docs/pages.md); scope values: [workspaceId, type]. */
export const RECORDS = defineRank({ name: 'records', table: 'records', by: ['workspace_id', 'kind'], ts: 'created_at', id: 'id' });

/**
 * Rewrites everything that indexes record values: the value index and the trigrams that serve
 * `contains` (docs/filtering.md). The rows of `recordIds` are removed, then `rows` written; `rows`
 * may also hold rows of records created in this transaction, which have none to remove. Every
 * writer of records calls this one function, so no writer can leave filters behind.
 */
export async function writeValueIndex(tx: Executor, defs: TypeDefinitions, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  await replaceValues(tx, recordIds, rows);
  await replaceTrigrams(tx, defs, recordIds, rows);
}

/** Replaces the value-index rows of `recordIds` by `rows` (docs/records.md §Value index). */
export async function replaceValues(tx: Executor, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  for (const part of chunks([...recordIds])) await tx.deleteFrom('record_values').where('record_id', 'in', part).execute();
  // 6 values a row.
  await insertRows(tx, 'record_values', ['workspace_id', 'object_type', 'field', 'value_text', 'value_num', 'record_id'], rows, 800);
}
export type RelationshipRow = EntityRelationshipsTable;

export function recordsByExternalId(db: Executor, workspaceId: string, kind: string, externalIds: string[]): Promise<Map<string, string>> {
  return lookupExternalIds(db, 'records', workspaceId, externalIds, kind);
}

/** Inserts new records and overwrites the fields of existing ones (by workspace, kind and externalId). */
export async function upsertRecords(db: Executor, rows: RecordRow[]): Promise<void> {
  // 7 values a row: 300 rows stay far below SQLite's and PostgreSQL's parameter limits.
  for (const part of chunks(rows, 300)) {
    await db
      .insertInto('records')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'kind', 'external_id']).doUpdateSet({ fields: sql`excluded.fields`, updated_at: sql`excluded.updated_at` }),
      )
      .execute();
  }
}

/** Replaces every relationship of the given sources by `rows` (re-imports replace, never merge). */
export async function replaceRelationships(tx: Executor, sourceIds: string[], rows: RelationshipRow[]): Promise<void> {
  for (const part of chunks(sourceIds)) await tx.deleteFrom('entity_relationships').where('source_id', 'in', part).execute();
  // 5 values a row.
  for (const part of chunks(rows, 1000)) await tx.insertInto('entity_relationships').values(part).execute();
}

/**
 * The contacts of the workspace whose `$email` holds one of `emails`, ignoring case, by folded
 * address (docs/records.md §Value index). Meetings and emails derive their `$contact` with it.
 */
export async function contactIdsByEmails(db: Executor, workspaceId: string, emails: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const folded = [...new Set(emails.map(foldText))];
  for (const part of chunks(folded)) {
    const rows = await db
      .selectFrom('record_values')
      .select(['value_text', 'record_id'])
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', 'contact')
      .where('field', '=', '$email')
      .where('value_text', 'in', part)
      .orderBy('record_id')
      .execute();
    for (const r of rows) {
      const key = r.value_text as string;
      const ids = out.get(key) ?? [];
      if (!ids.includes(r.record_id)) ids.push(r.record_id);
      out.set(key, ids);
    }
  }
  return out;
}
