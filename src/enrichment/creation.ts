// ENRICHMENT=on-create (docs/enrichment.md §Runs): the runs of the records created through the API,
// recorded by the runners from the change log, never by the create. Every create appends its
// `<type>.created` event in its own transaction; a runner reads the events past a durable cursor,
// up to the log's settled end (src/db/log-end.ts), plans the run of each account and contact an API
// key created (not an operator: an import, the CLI) from the resource the event carries, and
// records those runs and the cursor's move in one transaction. The move is a compare-and-set:
// of two runners that read the same events, one records them and the other's transaction records
// nothing. A run's id is drawn from its event's, and a record with a run in flight (a POST that
// came first) gets none: a run is recorded once per event, and one per record is in flight.
// Instances of other modes may share the database and leave the cursor alone; its `updated_at`,
// moved or touched by every runner at least every CURSOR_BEAT_MS, tells whether one is alive.
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
 * A runner touches the cursor at least this often, moving it or not, so that its `updated_at` tells
 * whether an on-create runner is alive (docs/enrichment.md §Runs).
 */
export const CURSOR_BEAT_MS = 60_000;

/**
 * A cursor no runner has moved or touched for this long has no runner left: the sweeper no longer
 * keeps the events past it, and a server started with on-create restarts it at the log's end. An
 * hour: far more than a beat (a round of the runner takes at most a claim's runs, each within its
 * timeout), and less than EVENT_RETENTION_DAYS' least, a day.
 */
export const CURSOR_STALE_MS = 3_600_000;

/** The time before which a cursor's last move or touch leaves it stale, at `now`. */
export const staleBefore = (now: number) => isoNow(now - CURSOR_STALE_MS);

/**
 * At start-up, with on-create: the cursor starts at the log's end unless a runner keeps it (it
 * exists and is not stale), so a server switched from manual plans no runs for what was created
 * before. With manual or off it is left alone: an on-create instance sharing the database may be
 * reading the log with it.
 */
export async function prepareCreationLog(db: Executor, mode: EnrichmentEnv['mode'], now = Date.now()): Promise<void> {
  if (mode !== 'on-create') return;
  const cursor = await repo.readCursor(db);
  if (cursor && cursor.updatedAt >= staleBefore(now)) return;
  const end = await lastEventSeq(db);
  if (cursor) await repo.restartStaleCursor(db, end, isoNow(now), staleBefore(now));
  else await repo.openCursor(db, end, isoNow(now));
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
  const cursor = await repo.readCursor(db);
  const now = Date.now();
  const at = isoNow(now);
  // A cursor dropped under a runner (by a server of an earlier version started with manual) opens again at the log's end.
  if (!cursor) return (await repo.openCursor(db, await lastEventSeq(db), at), none);
  const from = cursor.seq;
  const upTo = await end.settled(db);
  if (upTo <= from) {
    if (cursor.updatedAt < isoNow(now - CURSOR_BEAT_MS)) await repo.moveCursor(db, from, from, at);
    return none;
  }
  const events = await eventsAfter(db, { after: from, upTo, types: CREATED, limit: CREATION_BATCH });
  const to = events.length === CREATION_BATCH ? Number(events.at(-1)!.seq) : upTo;
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
