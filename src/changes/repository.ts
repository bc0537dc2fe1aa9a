// SQL of the change log (docs/events.md, docs/history.md). Everything here runs in the caller's
// transaction and only inserts new rows (deferredInsert): on PostgreSQL it goes out with the
// write's next statement and keeps a create fit for a group commit (src/db/postgres/group-commit.ts).
import { sql } from 'kysely';
import { chunks, deferredInsert, fewTexts, holdsText, insertRows, preparedInsertThen, type Executor, type Tx } from '../db/index.ts';
import { holdsAny } from '../lib/holds-any.ts';
import { dropDeliveriesOf, fanOut, queueFrom, signalIfQueued } from '../webhooks/repository.ts';
import type { EventsTable, FieldHistoryTable } from './tables.ts';

export type EventRow = Omit<EventsTable, 'seq'>;
export type HistoryRow = Pick<FieldHistoryTable, 'seq' | 'value' | 'recorded_at' | 'is_create'>;

/**
 * One event and its deliveries: one statement where the database allows (deferredInsertThen),
 * built and compiled once, since every API write appends one.
 */
const insertEvent = preparedInsertThen(
  'events',
  (db: Executor, id: string, workspaceId: string, type: string, objectId: string, occurredAt: string, body: string) => ({
    row: { id, workspace_id: workspaceId, type, object_id: objectId, occurred_at: occurredAt, body },
    then: (source) => queueFrom(db, source, sql`e.id = ${id}`),
  }),
);

/**
 * Appends the events, in order (each numbered after the one before it), and queues each for every
 * live subscription of its workspace that takes its type.
 */
export async function insertEvents(tx: Tx, rows: readonly EventRow[]): Promise<void> {
  // One event (an API write's) stays fit for a group commit; many (an import's chunk) go out as
  // prepared multi-row statements of 6 values a row, without Kysely's building of each value.
  if (rows.length === 1) {
    const row = rows[0]!;
    signalIfQueued(tx, await insertEvent(tx, row.id, row.workspace_id, row.type, row.object_id, row.occurred_at, row.body));
    return;
  }
  for (const part of chunks([...rows], 1000)) {
    await insertRows(tx, 'events', ['id', 'workspace_id', 'type', 'object_id', 'occurred_at', 'body'], part as EventsTable[], 1000);
    await fanOut(
      tx,
      part.map((r) => r.id),
    );
  }
}

/** The starting snapshot of a record: every field it holds, as one `*` row. */
export async function insertSnapshot(tx: Tx, row: Omit<FieldHistoryTable, 'field' | 'seq'>): Promise<void> {
  await deferredInsert(tx, tx.insertInto('field_history').values({ ...row, field: '*', seq: 0 }));
}

/** Starting snapshots of many records (an import's: field `*`, seq 0), a multi-row statement per 1,000. */
export async function insertSnapshots(tx: Tx, rows: readonly FieldHistoryTable[]): Promise<void> {
  // 7 values a row.
  await insertRows(tx, 'field_history', ['record_id', 'field', 'seq', 'workspace_id', 'value', 'recorded_at', 'is_create'], rows, 1000);
}

/**
 * One row per changed field, each numbered after the field's last one; `values` may name several
 * records (an import's). Runs after the write that took the records' rows, so two writers of one
 * record number their rows one after the other.
 */
export async function insertChanges(
  tx: Tx,
  input: { workspaceId: string; values: ReadonlyArray<[recordId: string, field: string, json: string | null, at: string]> },
): Promise<void> {
  // 4 values a row.
  for (const part of chunks([...input.values], 1000)) {
    const rows = sql.join(part.map(([r, f, v, at]) => sql`(cast(${r} as text), cast(${f} as text), cast(${v} as text), cast(${at} as text))`));
    await deferredInsert(
      tx,
      sql`insert into field_history (record_id, field, seq, workspace_id, value, recorded_at, is_create)
        select v.column1, v.column2,
          coalesce((select max(h.seq) from field_history as h where h.record_id = v.column1 and h.field = v.column2), 0) + 1,
          ${input.workspaceId}, v.column3, v.column4, 0
        from (values ${rows}) as v`,
    );
  }
}

/** Up to `limit` rows of one field older than `before` (a seq), newest first. */
export async function historyRows(db: Executor, recordId: string, field: string, before: number, limit: number): Promise<HistoryRow[]> {
  const rows = await db
    .selectFrom('field_history')
    .select(['seq', 'value', 'recorded_at', 'is_create'])
    .where('record_id', '=', recordId)
    .where('field', '=', field)
    .where('seq', '<', before)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, seq: Number(r.seq), is_create: Number(r.is_create) }));
}

/** Whether the field has its row numbered `seq` (one read by the key). */
export async function historyRowExists(db: Executor, recordId: string, field: string, seq: number): Promise<boolean> {
  const row = await db
    .selectFrom('field_history')
    .select('seq')
    .where('record_id', '=', recordId)
    .where('field', '=', field)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row !== undefined;
}

/** The record's starting snapshot, when it has one. */
export async function snapshotOf(db: Executor, recordId: string): Promise<HistoryRow | undefined> {
  const row = await historyRows(db, recordId, '*', 1, 1);
  return row[0];
}

/** Events of a workspace from `since` on (replays), oldest first. */
export async function eventsSince(db: Executor, workspaceId: string, since: string, afterSeq: number, limit: number) {
  return db
    .selectFrom('events')
    .select(['seq', 'id', 'type', 'occurred_at'])
    .where('workspace_id', '=', workspaceId)
    .where('occurred_at', '>=', since)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** The number of the last event written (0: none). */
export async function lastEventSeq(db: Executor): Promise<number> {
  const r = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('last'))
    .executeTakeFirst();
  return Number(r?.last ?? 0);
}

/**
 * The events of `types` numbered after `after` and up to `upTo`, in order, at most `limit`: a
 * reader of the log past a cursor of its own (docs/enrichment.md §Runs). It walks the key from
 * `after`, so its cost follows what it reads, not the log's length.
 */
export function eventsAfter(db: Executor, input: { after: number; upTo: number; types: readonly string[]; limit: number }) {
  return db
    .selectFrom('events')
    .select(['seq', 'body'])
    .where('seq', '>', input.after)
    .where('seq', '<=', input.upTo)
    .where('type', 'in', input.types)
    .orderBy('seq')
    .limit(input.limit)
    .execute();
}

/**
 * Deletes events older than `before` that no delivery waits for, and none numbered after
 * `keepAfter` (a reader's cursor that has not passed them yet); how many. The events are appended
 * in time order, so those to go are the oldest by `seq`: the boundary is the first event not older
 * than `before`, found by walking `seq` from the oldest through the events that go (docs/events.md
 * §Storage); an event appended a moment out of order stays until the next sweep.
 */
export async function purgeEvents(db: Executor, before: string, limit: number, keepAfter?: number): Promise<number> {
  const young = await db.selectFrom('events').select('seq').where('occurred_at', '>=', before).orderBy('seq').limit(1).executeTakeFirst();
  let old = db
    .selectFrom('events')
    .select('id')
    .where('occurred_at', '<', before)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'events.id'))))
    .orderBy('seq')
    .limit(limit);
  if (young) old = old.where('seq', '<', young.seq);
  if (keepAfter !== undefined) old = old.where('seq', '<=', keepAfter);
  const r = await db.deleteFrom('events').where('id', 'in', old).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Events read a page at a time by a purge's one pass over a workspace's log (eraseChangesOf). */
const ERASE_PAGE = 1000;

/** The events of the workspace that name one of a few `ids`: the database tests each text. */
async function eventsNaming(tx: Executor, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  const rows = await tx
    .selectFrom('events')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('object_id', 'in', ids), ...ids.map((id) => holdsText(tx, 'body', id))]))
    .execute();
  return rows.map((e) => e.id);
}

/** As eventsNaming for many ids: one pass over the workspace's log, each text tested here. */
async function eventsNamingAny(tx: Executor, workspaceId: string, ids: ReadonlySet<string>): Promise<string[]> {
  const names = holdsAny(ids);
  const named: string[] = [];
  for (let after: number | undefined; ;) {
    let page = tx.selectFrom('events').select(['id', 'seq', 'object_id', 'body']).where('workspace_id', '=', workspaceId);
    if (after !== undefined) page = page.where('seq', '>', after);
    const rows = await page.orderBy('seq').limit(ERASE_PAGE).execute();
    for (const e of rows) if (ids.has(e.object_id) || names(e.body)) named.push(e.id);
    if (rows.length < ERASE_PAGE) return named;
    after = Number(rows.at(-1)!.seq);
  }
}

/**
 * Erases what the change log holds of the records being purged (docs/trash.md §Purge): their field
 * history, and every event of the workspace that names one of them (their own, and those that
 * carry an id, such as a merge's or a list's), with their queued deliveries. An event names a
 * record by its id as written (`holdsText`'s rule, read here by `holdsAny`): one holding a
 * look-alike names another record. A few ids are searched for by the database; more, in one pass
 * over the workspace's log read a page at a time by its index: a purge of many costs one pass, not
 * one a record. Every event committed before the first page is read.
 */
export async function eraseChangesOf(tx: Tx, workspaceId: string, ids: readonly string[]): Promise<{ events: number; historyRows: number }> {
  if (ids.length === 0) return { events: 0, historyRows: 0 };
  const objects = new Set(ids);
  const named = ids.length <= fewTexts(tx) ? await eventsNaming(tx, workspaceId, ids) : await eventsNamingAny(tx, workspaceId, objects);
  await dropDeliveriesOf(tx, named);
  for (const part of chunks(named)) await tx.deleteFrom('events').where('id', 'in', part).execute();
  let historyRows = 0;
  for (const part of chunks([...objects])) {
    const r = await tx.deleteFrom('field_history').where('workspace_id', '=', workspaceId).where('record_id', 'in', part).executeTakeFirst();
    historyRows += Number(r.numDeletedRows);
  }
  return { events: named.length, historyRows };
}
