// SQL of enrichment runs (docs/enrichment.md §Runs). A run in flight (queued or running) is unique
// per record (a partial unique index), so a second request finds the first. A runner claims due
// runs under a token of its own: a queued run, or a running one whose lease has ended (its runner
// died or stalled); the claim moves due_at to the end of the new lease and counts an attempt. A
// run's outcome is written only while its claimant still holds it. On PostgreSQL concurrent
// claims skip each other's locked rows (FOR UPDATE SKIP LOCKED); SQLite has one writer at a time.
// Lease times are the database's clock, never an instance's.
import { sql } from 'kysely';
import { chunks, claimable, lockedForUpdate, timeFromNow, type Executor } from '../db/index.ts';
import type { EnrichmentRunsTable, RunStatus } from './tables.ts';

export type RunRow = EnrichmentRunsTable;

// The partial indexes' own condition, as text, in every statement that is to use one: SQLite uses
// a partial index (and matches an ON CONFLICT target to one) only where the statement's WHERE
// implies the index's, which a bound parameter never proves, nor does PostgreSQL's generic plan of
// a prepared statement. A claim thus reads the runs in flight, never the ones that ended
// (test/guards/enrichment-claim-plan.test.ts).
const IN_FLIGHT_SQL = sql<boolean>`status in ('queued', 'running')`;

/**
 * Inserts `row` unless the record has a run in flight; returns the run in flight after the
 * statement: `row` as inserted, or the record's run that was in flight (its id differs). One
 * statement: the conflict's no-op update returns the run it met, locked until the caller commits
 * on PostgreSQL, so that no end of it can come between this insert and a read of it (a read of its
 * own would find none when it ended meanwhile).
 */
export async function insertRun(tx: Executor, row: RunRow): Promise<RunRow> {
  return tx
    .insertInto('enrichment_runs')
    .values({ ...row, due_at: timeFromNow(tx, 0) })
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'entity_id'])
        .where(IN_FLIGHT_SQL)
        .doUpdateSet({ updated_at: (eb) => eb.ref('enrichment_runs.updated_at') }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Records the runs of `rows` (ENRICHMENT=on-create's, from the change log) in multi-row statements,
 * each unless its id is taken (a run recorded before) or its record has a run in flight (a POST
 * that came first): one statement per 200 runs, not one per run. A row recorded `running` is
 * claimed as it is, its lease ending `leaseMs` from now. Returns the ids recorded.
 */
export async function insertRuns(tx: Executor, rows: readonly RunRow[], leaseMs: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of chunks([...rows], 200)) {
    const recorded = await tx
      .insertInto('enrichment_runs')
      .values(part.map((row) => ({ ...row, due_at: timeFromNow(tx, row.status === 'running' ? leaseMs : 0) })))
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    for (const r of recorded) out.add(r.id);
  }
  return out;
}

/** Whether some run is due (a read: an idle table costs no write). */
export async function anyDue(db: Executor): Promise<boolean> {
  return (
    (await db.selectFrom('enrichment_runs').select('id').where(IN_FLIGHT_SQL).where('due_at', '<=', timeFromNow(db, 0)).limit(1).executeTakeFirst()) !==
    undefined
  );
}

const CURSOR = 'creation';

/** The on-create cursor: the last event considered, and when a runner last moved or touched it. */
export interface Cursor {
  seq: number;
  updatedAt: string;
}

/** The on-create cursor; undefined while there is none (no server has run with on-create). */
export async function readCursor(db: Executor): Promise<Cursor | undefined> {
  const row = await db.selectFrom('enrichment_cursor').select(['seq', 'updated_at']).where('name', '=', CURSOR).executeTakeFirst();
  return row ? { seq: Number(row.seq), updatedAt: row.updated_at } : undefined;
}

/** The on-create cursor's place: the last event considered; undefined while there is none. */
export async function cursorSeq(db: Executor): Promise<number | undefined> {
  return (await readCursor(db))?.seq;
}

/** The cursor's place unless no runner has moved or touched it since `staleBefore`: undefined then. */
export async function liveCursorSeq(db: Executor, staleBefore: string): Promise<number | undefined> {
  const c = await readCursor(db);
  return c && c.updatedAt >= staleBefore ? c.seq : undefined;
}

/** Starts the cursor at `seq` unless it exists. */
export async function openCursor(db: Executor, seq: number, at: string): Promise<void> {
  await db
    .insertInto('enrichment_cursor')
    .values({ name: CURSOR, seq, updated_at: at })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/** Restarts the cursor at `seq` if no runner has moved or touched it since `staleBefore`; whether it did. */
export async function restartStaleCursor(db: Executor, seq: number, at: string, staleBefore: string): Promise<boolean> {
  const r = await db
    .updateTable('enrichment_cursor')
    .set({ seq, updated_at: at })
    .where('name', '=', CURSOR)
    .where('updated_at', '<', staleBefore)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Moves the cursor from `from` to `to`; false when it is no longer at `from` (another runner moved it). */
export async function moveCursor(tx: Executor, from: number, to: number, at: string): Promise<boolean> {
  const r = await tx.updateTable('enrichment_cursor').set({ seq: to, updated_at: at }).where('name', '=', CURSOR).where('seq', '=', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export function findRun(db: Executor, workspaceId: string, id: string): Promise<RunRow | undefined> {
  return db.selectFrom('enrichment_runs').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/**
 * Erases every run of the records `entityIds`, ended or in flight (their purge, docs/trash.md
 * §Purge); how many. A runner executing one of them then no longer holds it, so its end writes
 * nothing.
 */
export async function eraseRunsOf(tx: Executor, workspaceId: string, entityIds: readonly string[]): Promise<number> {
  let n = 0;
  for (const part of chunks([...entityIds])) {
    const r = await tx.deleteFrom('enrichment_runs').where('workspace_id', '=', workspaceId).where('entity_id', 'in', part).executeTakeFirst();
    n += Number(r.numDeletedRows);
  }
  return n;
}

/** Erases run `id` (its record was purged, docs/trash.md §Purge). */
export async function eraseRun(tx: Executor, id: string): Promise<void> {
  await tx.deleteFrom('enrichment_runs').where('id', '=', id).execute();
}

/** The runs a claim took, and those it failed instead (left running after their last attempt). */
export interface Claim {
  claimed: RunRow[];
  abandoned: RunRow[];
}

/**
 * Claims up to `limit` due runs for `token` for `leaseMs`, the earliest due first; those of them
 * whose lease ended after their last allowed attempt are failed instead. Both statements read only
 * the `limit` earliest due runs, however many are due behind them. The caller looks first whether
 * any run is due (anyDue), so that an idle table costs no write, and appends the events of the
 * runs failed in the same transaction (./outcome.ts).
 */
export async function claimDue(db: Executor, input: { token: string; leaseMs: number; limit: number; maxAttempts: number; at: string }): Promise<Claim> {
  const due = () =>
    claimable(
      db,
      db.selectFrom('enrichment_runs').select('id').where(IN_FLIGHT_SQL).where('due_at', '<=', timeFromNow(db, 0)).orderBy('due_at').limit(input.limit),
    );
  const abandoned = await db
    .updateTable('enrichment_runs')
    .set({ status: 'failed', completed_at: input.at, updated_at: input.at, lease_owner: null, error: 'abandoned' })
    .where('id', 'in', due())
    .where('status', '=', 'running')
    .where('attempts', '>=', input.maxAttempts)
    .returningAll()
    .execute();
  const claimed = await db
    .updateTable('enrichment_runs')
    .set({
      status: 'running',
      lease_owner: input.token,
      due_at: timeFromNow(db, input.leaseMs),
      attempts: sql<number>`attempts + 1`,
      started_at: sql<string>`coalesce(started_at, ${input.at})`,
      updated_at: input.at,
    })
    .where('id', 'in', due())
    .returningAll()
    .execute();
  return { claimed, abandoned };
}

/** Extends the lease of the runs `token` still holds; returns their ids. */
export async function renewLease(db: Executor, token: string, leaseMs: number): Promise<string[]> {
  const rows = await db
    .updateTable('enrichment_runs')
    .set({ due_at: timeFromNow(db, leaseMs) })
    .where(IN_FLIGHT_SQL)
    .where('lease_owner', '=', token)
    .where('status', '=', 'running')
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Whether `token` still holds run `id`; taken FOR UPDATE inside a transaction on PostgreSQL. */
export async function holds(tx: Executor, id: string, token: string): Promise<boolean> {
  let q = tx.selectFrom('enrichment_runs').select('id').where('id', '=', id).where('lease_owner', '=', token).where('status', '=', 'running');
  q = lockedForUpdate(tx, q);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Ends run `id` with `status` while `token` holds it; the run as it ended, undefined when it no longer held it. */
export async function finish(
  db: Executor,
  id: string,
  token: string,
  status: Exclude<RunStatus, 'queued' | 'running'>,
  at: string,
  error: string | null,
): Promise<RunRow | undefined> {
  return db
    .updateTable('enrichment_runs')
    .set({ status, completed_at: at, updated_at: at, lease_owner: null, error })
    .where('id', '=', id)
    .where('lease_owner', '=', token)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst();
}

export interface Outcome {
  id: string;
  status: Exclude<RunStatus, 'queued' | 'running'>;
  error: string | null;
}

/** Ends the runs of `outcomes` that `token` still holds, in one statement; returns the runs it ended, as they ended. */
export async function finishAll(db: Executor, token: string, outcomes: readonly Outcome[], at: string): Promise<RunRow[]> {
  if (outcomes.length === 0) return [];
  const ids = outcomes.map((o) => o.id);
  const pick = (value: (o: Outcome) => string | null) =>
    sql<string>`case id ${sql.join(
      outcomes.map((o) => sql`when ${o.id} then ${value(o)}`),
      sql` `,
    )} end`;
  return db
    .updateTable('enrichment_runs')
    .set({ status: pick((o) => o.status) as never, error: pick((o) => o.error), completed_at: at, updated_at: at, lease_owner: null })
    .where('id', 'in', ids)
    .where('lease_owner', '=', token)
    .where('status', '=', 'running')
    .returningAll()
    .execute();
}

/**
 * Gives back runs not started (a runner stopping) at `at`: due at once, this attempt uncounted. A
 * run no earlier claim took never began, so its `started_at` goes back to null with its status
 * (queued); its `updated_at` moves, as with every change of its status.
 */
export async function release(db: Executor, token: string, ids: readonly string[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('enrichment_runs')
    .set({
      status: 'queued',
      updated_at: at,
      lease_owner: null,
      due_at: timeFromNow(db, 0),
      attempts: sql<number>`attempts - 1`,
      started_at: sql<string | null>`case when attempts > 1 then started_at end`,
    })
    .where('lease_owner', '=', token)
    .where('id', 'in', ids)
    .execute();
}

/**
 * The oldest account of the workspace (by `createdAt`, then id) whose `$website` has one of `hosts`,
 * read from the value index's `$website.host` rows: hosts as a URL reads them (docs/records.md
 * §Value index), so a website matches the same way on both databases, whatever its letters.
 */
export async function oldestAccountOnHosts(db: Executor, workspaceId: string, hosts: readonly string[]): Promise<string | null> {
  if (hosts.length === 0) return null;
  const row = await db
    .selectFrom('records')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'account')
    .where('id', 'in', (qb) =>
      qb
        .selectFrom('record_values')
        .select('record_id')
        .where('workspace_id', '=', workspaceId)
        .where('object_type', '=', 'account')
        .where('field', '=', '$website.host')
        .where('value_text', 'in', [...hosts]),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}
