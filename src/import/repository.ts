// The one query the import runs for every kind: the rows that import lines name, by name.
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { chunks, type Executor } from '../db/index.ts';

/** Tables whose rows carry a workspace and an externalId. */
export type ExternalTable = 'users' | 'channels' | 'files' | 'records' | 'lists';

/** The column a chunk of names is compared with: the externalId, or the id of a row without one. */
export type NameColumn = 'external_id' | 'id';

/** The shape of a server id (src/lib/ids.ts): a kind, `_`, 26 characters of base32. */
const SERVER_ID = /^[a-z]+_[0-9a-z]{26}$/u;

/** The rows named by `part` through `by` (`byName`); `table` is the alias the query gives the table. */
export function named(by: NameColumn, part: readonly string[], table?: string): RawBuilder<SqlBool> {
  const col = (c: string) => sql.ref(table === undefined ? c : `${table}.${c}`);
  const list = sql.join([...part]);
  return by === 'external_id' ? sql<SqlBool>`${col('external_id')} in (${list})` : sql<SqlBool>`${col('id')} in (${list}) and ${col('external_id')} is null`;
}

/**
 * The workspace's rows that import lines name, by name, in chunks (docs/import.md §Export): a row
 * is named by its externalId, and a row without one by its server id, the name `rolodex export`
 * writes it under. So an export imported into its own workspace finds the objects it was made
 * from and updates them, instead of adding each again (or refusing a user's e-mail address).
 * `read` reads one chunk's rows compared by `by` (with `named`). A name that is no server id's
 * shape is never compared with ids: a file of its own externalIds costs one query a chunk.
 */
export async function byName<R extends { id: string; external_id: string | null }>(
  names: readonly string[],
  read: (part: string[], by: NameColumn) => Promise<R[]>,
): Promise<Map<string, R>> {
  const found = new Map<string, R>();
  for (const part of chunks([...names])) for (const r of await read(part, 'external_id')) found.set(r.external_id as string, r);
  const ids = names.filter((n) => !found.has(n) && SERVER_ID.test(n));
  for (const part of chunks(ids)) for (const r of await read(part, 'id')) found.set(r.id, r);
  return found;
}

/**
 * Server ids of a workspace's rows by name (`byName`). `only` narrows the rows to those holding
 * each of its values: the records table to one kind of record, the files to COMPLETED ones.
 */
export async function lookupExternalIds(
  db: Executor,
  table: ExternalTable,
  workspaceId: string,
  externalIds: string[],
  only: Readonly<Record<string, string>> = {},
): Promise<Map<string, string>> {
  const rows = await byName(externalIds, (part, by) => {
    let q = db
      .selectFrom(table as 'users')
      .select(['id', 'external_id'])
      .where('workspace_id', '=', workspaceId)
      .where(named(by, part));
    for (const [column, value] of Object.entries(only)) q = q.where(column as never, '=', value as never);
    return q.execute();
  });
  return new Map([...rows].map(([name, r]) => [name, r.id]));
}
