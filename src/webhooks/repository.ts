// SQL of outbound webhooks (docs/events.md §Delivery): subscriptions, and the outbox of deliveries
// worked like the e-mail outbox (src/emails/outbox-repository.ts): a claim takes due rows under a
// token with a lease (claim-repository.ts), the holder settles each row only while it still holds
// the token, and every time is the database's clock.
import { type RawBuilder, sql } from 'kysely';
import { chunks, claimable, deferredInsertRows, lockedForUpdate, signalAfterCommit, timeFromNow, type Executor, write, type Tx } from '../db/index.ts';
import type { WebhookDeliveriesTable, WebhookSubscriptionsTable } from './tables.ts';

export type SubscriptionRow = WebhookSubscriptionsTable;
export type DeliveryRow = WebhookDeliveriesTable;

/** The commit signal (src/db/signals.ts) of a write that queued deliveries: it wakes every dispatcher. */
export const QUEUED = 'webhooks';

/**
 * Queues each of the events `eventIds` (inserted before, in the same transaction) for each live
 * subscription that takes its type; once the transaction commits, if any was queued, wakes the
 * dispatchers of every process sharing the database.
 */
export async function fanOut(tx: Tx, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  signalIfQueued(tx, await deferredInsertRows(tx, queueFrom(tx, sql`events`, sql`e.id in (${sql.join(eventIds)})`)));
}

/**
 * The statement queueing the events of `source` (read as `e`) that `which` picks, each for every
 * live subscription that takes its type; its rows say whether it queued any (`signalIfQueued`).
 */
export function queueFrom(db: Executor, source: RawBuilder<unknown>, which: RawBuilder<unknown>): RawBuilder<{ queued: number }> {
  return sql<{ queued: number }>`${queueing(db, source, which)} returning 1 as queued`;
}

/**
 * A row is queued parked (docs/events.md §Delivery) for a failing endpoint, and for one whose
 * parked rows are not all unparked yet, so that its rows leave the parking in event order.
 */
const PARKED = sql`case when s.failing_since is not null
  or exists (select 1 from webhook_deliveries as q where q.subscription_id = s.id and q.parked = 1) then 1 else 0 end`;

function queueing(db: Executor, source: RawBuilder<unknown>, which: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`insert into webhook_deliveries (id, subscription_id, event_id, event_seq, object_id, next_attempt_at, attempts, parked)
      select e.id || ':' || s.id, s.id, e.id, e.seq, e.object_id, ${timeFromNow(db, 0)}, 0, ${PARKED}
      from ${source} as e join webhook_subscriptions as s on s.workspace_id = e.workspace_id
      where ${which} and s.disabled_at is null
        and (s.all_events = 1 or exists (select 1 from webhook_subscription_events as t where t.subscription_id = s.id and t.type = e.type))
      on conflict (id) do nothing`;
}

/**
 * Enables subscription `id` if it is disabled, its failing streak ended: its next failure starts a
 * new one. A subscription that is not disabled keeps its streak as it is (docs/events.md
 * §Webhooks): only an answer ends a streak, so that a replay run again and again never keeps a dead
 * endpoint from being disabled.
 */
export async function enableSubscription(tx: Tx, id: string): Promise<void> {
  await tx
    .updateTable('webhook_subscriptions')
    .set({ disabled_at: null, failing_since: null })
    .where('id', '=', id)
    .where('disabled_at', 'is not', null)
    .execute();
}

/**
 * Queues again for subscription `id` (live) the stored events from `since` on that it takes; how
 * many. Counted by the database, not returned row by row: a replay may span the whole history.
 */
export async function queueReplay(tx: Tx, id: string, since: string): Promise<number> {
  const r = await queueing(tx, sql`events`, sql`s.id = ${id} and e.occurred_at >= ${since}`).execute(tx);
  return Number(r.numAffectedRows ?? 0);
}

/** Once the transaction commits, wakes the dispatchers if `queued` (a `queueFrom`'s rows) holds any: a write no subscription takes signals nothing. */
export function signalIfQueued(tx: Tx, queued: { readonly rows?: unknown[] }): void {
  signalAfterCommit(tx, QUEUED, () => (queued.rows?.length ?? 0) > 0);
}

export async function insertSubscription(tx: Executor, row: SubscriptionRow, types: readonly string[]): Promise<void> {
  await tx.insertInto('webhook_subscriptions').values(row).execute();
  if (types.length > 0)
    await tx
      .insertInto('webhook_subscription_events')
      .values(types.map((type) => ({ subscription_id: row.id, type })))
      .execute();
}

export async function findSubscription(db: Executor, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function subscriptionTypes(db: Executor, ids: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const part of chunks([...ids])) {
    const rows = await db.selectFrom('webhook_subscription_events').selectAll().where('subscription_id', 'in', part).orderBy('type').execute();
    for (const r of rows) out.set(r.subscription_id, [...(out.get(r.subscription_id) ?? []), r.type]);
  }
  return out;
}

export async function listSubscriptions(db: Executor, workspaceId: string | undefined): Promise<SubscriptionRow[]> {
  let q = db.selectFrom('webhook_subscriptions').selectAll().orderBy('created_at').orderBy('id');
  if (workspaceId !== undefined) q = q.where('workspace_id', '=', workspaceId);
  return q.execute();
}

export async function deleteSubscription(tx: Executor, id: string): Promise<boolean> {
  await tx.deleteFrom('webhook_deliveries').where('subscription_id', '=', id).execute();
  await tx.deleteFrom('webhook_subscription_events').where('subscription_id', '=', id).execute();
  const r = await tx.deleteFrom('webhook_subscriptions').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** What delivering these rows needs: the events' bodies and the subscriptions' addresses and secrets. */
export async function deliveriesOf(db: Executor, rows: readonly DeliveryRow[]) {
  // Both reads go out together: on PostgreSQL, in one write to the shared connection.
  const [events, subs] = await Promise.all([
    (async () => {
      const out = new Map<string, string>();
      for (const part of chunks([...new Set(rows.map((r) => r.event_id))])) {
        for (const e of await db.selectFrom('events').select(['id', 'body']).where('id', 'in', part).execute()) out.set(e.id, e.body);
      }
      return out;
    })(),
    (async () => {
      const out = new Map<string, SubscriptionRow>();
      for (const part of chunks([...new Set(rows.map((r) => r.subscription_id))])) {
        for (const s of await db.selectFrom('webhook_subscriptions').selectAll().where('id', 'in', part).execute()) out.set(s.id, s);
      }
      return out;
    })(),
  ]);
  return { events, subs };
}

/** A row to settle: `delivered` when its endpoint answered 2xx, false when nothing was left to send. */
export interface Settled {
  id: string;
  subscription_id: string;
  delivered: boolean;
}

/**
 * Settled rows leave the outbox, and the subscriptions of those delivered count as healthy again,
 * their last error cleared, also when a give-up ended their streak before (docs/events.md
 * §Delivery: `lastError` is kept until a success). A row that failed before and whose event went
 * meanwhile ends its endpoint's streak as a give-up does, when nothing else is left failing for it
 * (endStreaks). Returns the ids settled. A healthy endpoint's row is not written. Single statements, no
 * transaction: on PostgreSQL they go out on the shared connection rather than wait for one of the
 * transactions' (src/db/postgres/lanes.ts), which the API's writes keep busy. The subscriptions
 * are cleared first: the endpoint answered 2xx whether or not the delete then commits, and a row it
 * leaves behind is only sent again.
 */
export async function settleDelivered(db: Executor, token: string, rows: readonly Settled[]): Promise<Set<string>> {
  const settled = new Set<string>();
  if (rows.length === 0) return settled;
  const delivered = new Set(rows.filter((r) => r.delivered).map((r) => r.id));
  for (const part of chunks([...new Set(rows.filter((r) => r.delivered).map((r) => r.subscription_id))]))
    await db
      .updateTable('webhook_subscriptions')
      .set({ failing_since: null, last_error: null })
      .where('id', 'in', part)
      .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('last_error', 'is not', null)]))
      .execute();
  for (const part of chunks(
    rows.map((r) => r.id),
    200,
  )) {
    const gone = await db
      .deleteFrom('webhook_deliveries')
      .where('lease_owner', '=', token)
      .where('id', 'in', part)
      .returning(['id', 'subscription_id', 'first_failed_at'])
      .execute();
    for (const g of gone) settled.add(g.id);
    const erased = gone.filter((g) => g.first_failed_at !== null && !delivered.has(g.id)).map((g) => g.subscription_id);
    if (erased.length > 0) await endStreaks(db, erased);
  }
  return settled;
}

/**
 * A failed attempt: tried again `delayMs` from now; given up when its first failure was
 * `disableAfterMs` ago (so that one event an endpoint always refuses does not hold back its
 * object's later ones for ever), which ends the endpoint's failing streak when no other of its
 * rows has failed; and when the subscription has been failing for `disableAfterMs`, the
 * subscription is disabled and its queued rows dropped. False when `token` no longer holds the row.
 */
export async function failed(
  db: Executor,
  row: DeliveryRow,
  token: string,
  input: { delayMs: number; error: string; disableAfterMs: number },
): Promise<'retry' | 'given_up' | 'disabled' | false> {
  return write(db, async (tx) => {
    // The endpoint first: two failures of one endpoint take turns here, before either locks a row
    // the other's parking would wait for (PostgreSQL).
    const sub = await lockedForUpdate(
      tx,
      tx.selectFrom('webhook_subscriptions').select('failing_since').where('id', '=', row.subscription_id),
    ).executeTakeFirst();
    const r = await tx
      .updateTable('webhook_deliveries')
      .set({
        next_attempt_at: timeFromNow(tx, input.delayMs),
        lease_owner: null,
        last_error: input.error,
        first_failed_at: sql<string>`coalesce(first_failed_at, ${timeFromNow(tx, 0)})`,
      })
      .where('id', '=', row.id)
      .where('lease_owner', '=', token)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    // The lock above keeps `failing_since` as read until this transaction ends.
    const began = sub !== undefined && sub.failing_since === null;
    await tx
      .updateTable('webhook_subscriptions')
      .set({ last_error: input.error, failing_since: sql<string>`coalesce(failing_since, ${timeFromNow(tx, 0)})` })
      .where('id', '=', row.subscription_id)
      .execute();
    // The endpoint begins to fail: its rows leave the claim's walk (docs/events.md §Delivery). A row
    // another statement holds meanwhile (a lease renewed, a row given back) is skipped, never
    // waited for: it stays in the walk, which steps over it, and the probe still takes it.
    if (began)
      await tx
        .updateTable('webhook_deliveries')
        .set({ parked: 1 })
        .where(
          'id',
          'in',
          claimable(
            tx,
            tx
              .selectFrom('webhook_deliveries')
              .select('id')
              .where('subscription_id', '=', row.subscription_id)
              .where(sql<boolean>`parked = 0`),
          ),
        )
        .execute();
    const gone = await tx
      .updateTable('webhook_subscriptions')
      .set({ disabled_at: timeFromNow(tx, 0) })
      .where('id', '=', row.subscription_id)
      .where('disabled_at', 'is', null)
      .where('failing_since', '<=', timeFromNow(tx, -input.disableAfterMs))
      .executeTakeFirst();
    if (Number(gone.numUpdatedRows) > 0) {
      await tx.deleteFrom('webhook_deliveries').where('subscription_id', '=', row.subscription_id).execute();
      return 'disabled';
    }
    const expired = await tx
      .deleteFrom('webhook_deliveries')
      .where('id', '=', row.id)
      .where('first_failed_at', '<=', timeFromNow(tx, -input.disableAfterMs))
      .executeTakeFirst();
    if (Number(expired.numDeletedRows) === 0) return 'retry';
    await endStreaks(tx, [row.subscription_id]);
    return 'given_up';
  });
}

/**
 * Ends the failing streak of each of `subscriptionIds` that has nothing left failing (no row that
 * failed), once a failing row of it is given up or erased (docs/events.md §Delivery): kept open,
 * a failure much later, its first in a long time, would disable it at once. Its parked rows then
 * come back as after a success (unparkRecovered); the last error stays until a success.
 */
async function endStreaks(db: Executor, subscriptionIds: readonly string[]): Promise<void> {
  for (const part of chunks([...new Set(subscriptionIds)]))
    await db
      .updateTable('webhook_subscriptions')
      .set({ failing_since: null })
      .where('id', 'in', part)
      .where('failing_since', 'is not', null)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as f')
              .select('f.id')
              .whereRef('f.subscription_id', '=', 'webhook_subscriptions.id')
              .where('f.first_failed_at', 'is not', null),
          ),
        ),
      )
      .execute();
}

/** Webhook deliveries waiting (for /metrics). */
export async function outboxDepth(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Drops the queued deliveries of these events (an erasure removes the events themselves). An
 * endpoint left with nothing failing once its failing ones are dropped ends its streak, as after a
 * give-up (docs/events.md §Delivery). Its subscription is locked first, as a failure locks it
 * before its row (`failed`), so that the two wait for each other in one order (PostgreSQL); and a
 * failure that commits meanwhile is seen by the delete.
 */
export async function dropDeliveriesOf(tx: Tx, eventIds: string[]): Promise<void> {
  const subs = new Set<string>();
  for (const part of chunks(eventIds))
    for (const d of await tx.selectFrom('webhook_deliveries').select('subscription_id').distinct().where('event_id', 'in', part).execute())
      subs.add(d.subscription_id);
  if (subs.size === 0) return;
  for (const part of chunks([...subs].sort()))
    await lockedForUpdate(tx, tx.selectFrom('webhook_subscriptions').select('id').where('id', 'in', part).orderBy('id')).execute();
  const failing: string[] = [];
  for (const part of chunks(eventIds)) {
    const gone = await tx.deleteFrom('webhook_deliveries').where('event_id', 'in', part).returning(['subscription_id', 'first_failed_at']).execute();
    for (const g of gone) if (g.first_failed_at !== null) failing.push(g.subscription_id);
  }
  await endStreaks(tx, failing);
}
