// ENRICHMENT=on-create (docs/enrichment.md §Runs): the runs of the records created through the API,
// recorded by the runners from the change log, never by the create. Every create appends its
// `<type>.created` event in its own transaction; a runner reads the events past a durable cursor,
// up to the log's settled end (src/db/log-end.ts), plans the run of each account and contact an API
// key created (not an operator: an import, the CLI) from the resource the event carries, and
// records those runs and the cursor's move in one transaction. The move is a compare-and-set:
// of two runners that read the same events, one records them and the other's transaction records
// nothing. A run's id is drawn from its event's, and a record with a run in flight (a POST that
// came first) gets none: a run is recorded once per event, and one per record is in flight.
import { type Executor, type LogEnd, write } from '../db/index.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import { eventsAfter, lastEventSeq } from '../changes/repository.ts';
import { operatorCtx } from '../lib/context.ts';
import { isoNow } from '../lib/ids.ts';
import { requireDefinitions } from '../records/service.ts';
import type { RecordResource } from '../records/resource.ts';
import type { RecordType, Subject } from './provider.ts';
import * as repo from './repository.ts';
import { type EnrichmentEnv, planCreated, subjectOf } from './service.ts';

const CREATED = ['account.created', 'contact.created'];

/** Events read at most per step. */
export const CREATION_BATCH = 500;

/**
 * At start-up: with on-create, the cursor starts at the log's end unless it exists, so a server
 * switched from manual plans no runs for what was created before; otherwise it is dropped, so that
 * a later switch to on-create starts from the log's end again.
 */
export async function prepareCreationLog(db: Executor, mode: EnrichmentEnv['mode']): Promise<void> {
  if (mode !== 'on-create') return repo.dropCursor(db);
  if ((await repo.cursorSeq(db)) !== undefined) return;
  await repo.openCursor(db, await lastEventSeq(db), isoNow(Date.now()));
}

/** Whether the event was written by an API key (its actor comes before its data in the body). */
function byApiKey(body: string): boolean {
  const at = body.indexOf('"actor":{"type":"');
  return at >= 0 && !body.startsWith('operator"', at + 17);
}

/** The run id of the event `evt_…`: `enr_` and the same characters. */
const runIdOf = (eventId: string) => `enr_${eventId.slice(eventId.indexOf('_') + 1)}`;

/** Runs a step may claim as it records them, under the round's token and lease. */
export interface FreshClaim {
  token: string;
  leaseMs: number;
  limit: number;
}

export interface CreationStep {
  /** Events considered: 0 when there were none, or another runner moved the cursor first. */
  read: number;
  /** The runs recorded claimed, with their records as the events carry them. */
  claimed: repo.RunRow[];
  subjects: Map<string, Subject>;
}

/**
 * One step: records the creation runs of the events past the cursor, up to CREATION_BATCH of them.
 * With `claim`, and when no other run is due (so that runs queued before never wait behind the
 * creates that keep coming), the first `claim.limit` of them are recorded claimed: the round
 * executes them from the records the events carry, with no claim and no read of its own.
 */
export async function recordCreationRuns(db: Executor, env: EnrichmentEnv, end: LogEnd, claim?: FreshClaim): Promise<CreationStep> {
  const none: CreationStep = { read: 0, claimed: [], subjects: new Map() };
  const from = await repo.cursorSeq(db);
  if (from === undefined) return none;
  const upTo = await end.settled(db);
  if (upTo <= from) return none;
  const events = await eventsAfter(db, { after: from, upTo, types: CREATED, limit: CREATION_BATCH });
  const to = events.length === CREATION_BATCH ? Number(events.at(-1)!.seq) : upTo;
  const now = Date.now();
  const at = isoNow(now);
  const defs = new Map<string, TypeDefinitions>();
  const rows: repo.RunRow[] = [];
  const subjects = new Map<string, Subject>();
  for (const e of events) {
    if (!byApiKey(e.body)) continue;
    const event = JSON.parse(e.body) as { id: string; type: string; workspaceId: string; data: { object: RecordResource } };
    const entityType = event.type.slice(0, event.type.indexOf('.')) as RecordType;
    const ctx = operatorCtx(db, event.workspaceId, { now });
    const key = `${event.workspaceId} ${entityType}`;
    let d = defs.get(key);
    if (!d) defs.set(key, (d = await requireDefinitions(ctx, entityType)));
    const subject = subjectOf(entityType, event.data.object);
    const row = planCreated(ctx, env, d, subject, runIdOf(event.id));
    if (row) {
      rows.push(row);
      subjects.set(subject.id, subject);
    }
  }
  const take = claim && rows.length > 0 && !(await repo.anyDue(db)) ? Math.min(claim.limit, rows.length) : 0;
  for (let i = 0; i < take; i++) rows[i] = { ...rows[i]!, status: 'running', lease_owner: claim!.token, attempts: 1, started_at: at };
  const recorded = await write(db, async (tx) => {
    if (!(await repo.moveCursor(tx, from, to, at))) return null;
    return repo.insertRuns(tx, rows, claim?.leaseMs ?? 0);
  });
  if (!recorded) return none;
  const claimed = rows.slice(0, take).filter((r) => recorded.has(r.id));
  return { read: Math.max(1, events.length), claimed, subjects };
}
