// The end of an enrichment run (docs/enrichment.md §Runs, docs/events.md §Types). Every write of a
// run's final state (completed, failed or timed_out) appends the run's `enrichment_run.completed`
// event in the same transaction: `data.object` is the run as GET /v1/enrichmentRun/{id} returns it
// then, `occurredAt` its `completedAt`, the actor the operator (the runner acts for no key). Each
// write ends only runs still in flight (held by its token, or abandoned by a dead runner), so a
// run's end appends its event once, and a write that ends nothing appends nothing.
import { appendEvents } from '../changes/service.ts';
import { type Executor, type Tx, write } from '../db/index.ts';
import { operatorCtx } from '../lib/context.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { toResource } from './service.ts';

/** The type of the event of a run's end, whatever its status (docs/events.md §Types). */
export const RUN_ENDED = 'enrichment_run.completed';

/** Appends the event of each run of `ended` (rows as they ended at `now`), in the caller's transaction. */
export async function appendRunsEnded(tx: Tx, ended: readonly repo.RunRow[], now: number): Promise<void> {
  const byWorkspace = new Map<string, repo.RunRow[]>();
  for (const row of ended) byWorkspace.set(row.workspace_id, [...(byWorkspace.get(row.workspace_id) ?? []), row]);
  for (const [workspaceId, rows] of byWorkspace)
    await appendEvents(
      operatorCtx(tx, workspaceId, { now }),
      rows.map((row) => ({ type: RUN_ENDED, object: toResource(row) })),
    );
}

/** Ends run `outcome.id` while `token` holds it, with its event; false when it no longer held it. */
export async function finishRun(db: Executor, token: string, outcome: repo.Outcome, now = Date.now()): Promise<boolean> {
  return write(db, async (tx) => {
    const row = await repo.finish(tx, outcome.id, token, outcome.status, isoNow(now), outcome.error);
    if (row) await appendRunsEnded(tx, [row], now);
    return row !== undefined;
  });
}

/** Ends the runs of `outcomes` that `token` still holds, in one statement, with their events; the ids it ended. */
export async function finishRuns(db: Executor, token: string, outcomes: readonly repo.Outcome[], now = Date.now()): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  return write(db, async (tx) => {
    const rows = await repo.finishAll(tx, token, outcomes, isoNow(now));
    await appendRunsEnded(tx, rows, now);
    return new Set(rows.map((r) => r.id));
  });
}

/**
 * Claims due runs (repo.claimDue) in one transaction with the events of those it fails instead
 * (left running after their last attempt). A read first: an idle table costs no write (on SQLite,
 * no write lock every poll).
 */
export async function claimRuns(
  db: Executor,
  input: { token: string; leaseMs: number; limit: number; maxAttempts: number; at: string },
): Promise<repo.RunRow[]> {
  if (!(await repo.anyDue(db))) return [];
  return write(db, async (tx) => {
    const { claimed, abandoned } = await repo.claimDue(tx, input);
    await appendRunsEnded(tx, abandoned, Date.parse(input.at));
    return claimed;
  });
}
