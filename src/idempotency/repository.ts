// The idempotency_keys table: claims, replays and leases (docs/design.md §Idempotency). A key names
// one request per workspace and operation (KeyRef). A claim is a row in state 'pending'; the
// handler's transaction turns it into 'done' with the successful response, so the stored response
// and the writes commit together; a failure gives the claim back (releaseKey). A pending claim
// whose holder died (crash, lost connection) can be taken over once its lease has run out.
import { chunks, fewTexts, holdsText, type Executor } from '../db/index.ts';
import { holdsAny } from '../lib/holds-any.ts';

export const RETENTION_MS = 24 * 3600 * 1000;
export const LEASE_MS = 30_000;

/** The namespace and name of a key: the same key under two operations names two requests. */
export interface KeyRef {
  workspaceId: string;
  operation: string;
  key: string;
}

export type Claim =
  | { kind: 'claimed'; lockedAt: string }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' }
  | { kind: 'callerless' }
  | { kind: 'erased' };

/**
 * A request's fingerprints: `own`, with its caller, is stored with a new claim and names the same
 * request; `callerless` is the form releases before the caller was part of it stored, which names
 * no caller and so is never replayed (docs/design.md §Idempotency).
 */
export interface Fingerprints {
  own: string;
  callerless: string;
}

/** The row of a key, in every statement. */
function whereRef<Q extends { where: (...a: any[]) => Q }>(q: Q, ref: KeyRef): Q {
  return q.where('workspace_id', '=', ref.workspaceId).where('operation', '=', ref.operation).where('key', '=', ref.key);
}

/**
 * Claims the key for a request, or finds the claim of the same request. A stored row in the
 * callerless form answered some caller of the workspace that it cannot name: its answer goes to
 * nobody, whoever repeats the request (docs/design.md §Idempotency).
 */
export async function claimKey(db: Executor, ref: KeyRef, fingerprints: Fingerprints, now: number): Promise<Claim> {
  const fingerprint = fingerprints.own;
  const lockedAt = new Date(now).toISOString();
  const { workspaceId: workspace_id, operation, key } = ref;
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ workspace_id, operation, key, fingerprint, state: 'pending', status_code: null, body: null, locked_at: lockedAt, created_at: lockedAt })
      .onConflict((oc) => oc.columns(['workspace_id', 'operation', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { kind: 'claimed', lockedAt };

    const row = await whereRef(db.selectFrom('idempotency_keys').selectAll(), ref).executeTakeFirst();
    if (!row) continue; // purged between the two statements: try again
    const expired = now - Date.parse(row.created_at) > RETENTION_MS;
    // An abandoned claim stored nothing: like any failure it frees its key, whatever the body of
    // the request that takes it over (docs/design.md §Idempotency).
    const abandoned = row.state === 'pending' && now - Date.parse(row.locked_at) > LEASE_MS;
    if (expired || abandoned) {
      // Compare-and-set on the old lock so that of several takers exactly one wins.
      const taken = await whereRef(
        db
          .updateTable('idempotency_keys')
          .set({ fingerprint, state: 'pending', status_code: null, body: null, locked_at: lockedAt, created_at: expired ? lockedAt : row.created_at }),
        ref,
      )
        .where('locked_at', '=', row.locked_at)
        .where('state', '=', row.state)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return { kind: 'claimed', lockedAt };
      continue;
    }
    // An answer a purge erased is replayed to nobody, and its request is not run again.
    if (row.state === 'erased') return { kind: 'erased' };
    if (row.fingerprint === fingerprints.callerless) return { kind: 'callerless' };
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (row.state === 'done') return { kind: 'replay', status: row.status_code as number, body: row.body as string };
    return { kind: 'in_flight' };
  }
  return { kind: 'in_flight' };
}

/** Stores a successful outcome; false when the claim was lost (taken over after its lease ran out). */
export async function finishKey(db: Executor, ref: KeyRef, lockedAt: string, status: number, body: string): Promise<boolean> {
  const r = await whereRef(db.updateTable('idempotency_keys').set({ state: 'done', status_code: status, body }), ref)
    .where('locked_at', '=', lockedAt)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Gives the key back after a failure, so that the client's retry runs the request again. */
export async function releaseKey(db: Executor, ref: KeyRef, lockedAt: string): Promise<void> {
  await whereRef(db.deleteFrom('idempotency_keys'), ref).where('locked_at', '=', lockedAt).where('state', '=', 'pending').execute();
}

/** Stored answers read a page at a time by a purge's one pass over a workspace's (eraseAnswersHolding). */
const ERASE_PAGE = 500;
const ERASED = { state: 'erased', fingerprint: 'erased', status_code: null, body: null } as const;

/** The keys, by operation, of the workspace's stored answers that hold one of `texts`: one pass, each tested here. */
async function answersHoldingAny(db: Executor, workspaceId: string, texts: readonly string[]): Promise<Map<string, string[]>> {
  const holds = holdsAny(texts);
  const named = new Map<string, string[]>();
  for (let after: { operation: string; key: string } | undefined; ;) {
    let page = db.selectFrom('idempotency_keys').select(['operation', 'key', 'body']).where('workspace_id', '=', workspaceId).where('state', '=', 'done');
    if (after) {
      const { operation, key } = after;
      page = page.where((eb) => eb.or([eb('operation', '>', operation), eb.and([eb('operation', '=', operation), eb('key', '>', key)])]));
    }
    const rows = await page.orderBy('operation').orderBy('key').limit(ERASE_PAGE).execute();
    for (const r of rows) {
      if (r.body === null || !holds(r.body)) continue;
      const keys = named.get(r.operation);
      if (keys) keys.push(r.key);
      else named.set(r.operation, [r.key]);
    }
    if (rows.length < ERASE_PAGE) return named;
    after = rows.at(-1);
  }
}

/**
 * Erases the stored answers of the workspace that hold one of `texts` (purged records' ids): their
 * body and fingerprint go, the key stays taken in state 'erased' until it expires, so that a retry
 * is refused instead of doing its work again (docs/trash.md §Purge). A text is found as written
 * (`holdsText`'s rule), never as a pattern: a few texts are searched for by the database; more, in
 * one pass over the workspace's answers read a page at a time by the primary key (`holdsAny`), not
 * one a text. Returns how many.
 */
export async function eraseAnswersHolding(db: Executor, workspaceId: string, texts: readonly string[]): Promise<number> {
  if (texts.length === 0) return 0;
  const named = texts.length <= fewTexts(db) ? undefined : await answersHoldingAny(db, workspaceId, texts);
  const erase = () => db.updateTable('idempotency_keys').set(ERASED).where('workspace_id', '=', workspaceId).where('state', '=', 'done');
  if (named === undefined) {
    const r = await erase()
      .where((eb) => eb.or(texts.map((t) => holdsText(db, 'body', t))))
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
  let n = 0;
  for (const [operation, keys] of named)
    for (const part of chunks(keys)) n += Number((await erase().where('operation', '=', operation).where('key', 'in', part).executeTakeFirst()).numUpdatedRows);
  return n;
}

export async function purgeExpiredKeys(db: Executor, now: number): Promise<number> {
  const r = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', new Date(now - RETENTION_MS).toISOString())
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
