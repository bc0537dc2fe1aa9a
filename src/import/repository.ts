// The one query the import runs for every kind: server ids by externalId.
import { chunks, type Executor } from '../db/index.ts';

/** Tables whose rows carry a workspace and an externalId. */
export type ExternalTable = 'users' | 'channels' | 'files' | 'records' | 'lists';

/**
 * Server ids of a workspace's rows by externalId, in chunks. `kind` narrows the records table to
 * one kind of record.
 */
export async function lookupExternalIds(
  db: Executor,
  table: ExternalTable,
  workspaceId: string,
  externalIds: string[],
  kind?: string,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const part of chunks(externalIds)) {
    let q = db
      .selectFrom(table as 'users')
      .select(['id', 'external_id'])
      .where('workspace_id', '=', workspaceId)
      .where('external_id', 'in', part);
    if (kind !== undefined) q = q.where('kind' as never, '=', kind as never);
    for (const r of await q.execute()) found.set(r.external_id as string, r.id);
  }
  return found;
}
