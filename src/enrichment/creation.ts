// ENRICHMENT=on-create (docs/enrichment.md §Runs): the runs of the records created through the API,
// recorded by the runners from the change log, never by the create. Every create appends its
// `<type>.created` event in its own transaction; a runner reads the events past a durable cursor,
// up to the log's settled end (src/db/log-end.ts), plans the run of each account and contact an API
// key created (not an operator: an import, the CLI) from the resource the event carries, and
// records those runs and the cursor's move in one transaction. The move is a compare-and-set:
// of two runners that read the same events, one records them and the other's transaction records
// nothing. A run's id is drawn from its event's, and a record with a run in flight (a POST that
// came first) gets none: a run is recorded once per event, and one per record is in flight.
import type { Executor, LogEnd } from '../db/index.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import { eventsAfter, lastEventSeq } from '../changes/repository.ts';
import { operatorCtx } from '../lib/context.ts';
import { isoNow } from '../lib/ids.ts';
import { requireDefinitions } from '../records/service.ts';
import type { RecordResource } from '../records/resource.ts';
import type { RecordType } from './provider.ts';
import * as repo from './repository.ts';
import { type EnrichmentEnv, planCreated } from './service.ts';

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

/**
 * One step: records the creation runs of the events past the cursor, up to CREATION_BATCH of them;
 * how many events it considered (0: none, or another runner moved the cursor first).
 */
export async function recordCreationRuns(db: Executor, env: EnrichmentEnv, end: LogEnd): Promise<number> {
  const from = await repo.cursorSeq(db);
  if (from === undefined) return 0;
  const upTo = await end.settled(db);
  if (upTo <= from) return 0;
  const events = await eventsAfter(db, { after: from, upTo, types: CREATED, limit: CREATION_BATCH });
  const to = events.length === CREATION_BATCH ? Number(events.at(-1)!.seq) : upTo;
  const now = Date.now();
  const defs = new Map<string, TypeDefinitions>();
  const rows: repo.RunRow[] = [];
  for (const e of events) {
    if (!byApiKey(e.body)) continue;
    const event = JSON.parse(e.body) as { id: string; type: string; workspaceId: string; data: { object: RecordResource } };
    const entityType = event.type.slice(0, event.type.indexOf('.')) as RecordType;
    const ctx = operatorCtx(db, event.workspaceId, { now });
    const key = `${event.workspaceId} ${entityType}`;
    let d = defs.get(key);
    if (!d) defs.set(key, (d = await requireDefinitions(ctx, entityType)));
    const row = planCreated(ctx, env, d, entityType, event.data.object, runIdOf(event.id));
    if (row) rows.push(row);
  }
  const moved = await db.transaction().execute(async (tx) => {
    if (!(await repo.moveCursor(tx, from, to, isoNow(now)))) return false;
    await repo.insertRuns(tx, rows);
    return true;
  });
  return moved ? Math.max(1, events.length) : 0;
}
