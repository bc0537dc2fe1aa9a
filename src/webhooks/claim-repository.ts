// SQL of the webhook dispatcher's claim (docs/events.md §Delivery): which due deliveries a round
// takes, under a token with a lease, and gives back. A row is claimable only when no earlier event
// of the same object waits for the same subscription, so each object's events arrive in order.
import { sql } from 'kysely';
import { chunks, claimable, timeFromNow, type Executor } from '../db/index.ts';
import type { DeliveryRow } from './repository.ts';

/** Whether `d`'s row is the oldest waiting of its object for its subscription (in order per object). */
const firstOfObject = (as: string) =>
  sql<boolean>`not exists (select 1 from webhook_deliveries as o
    where o.subscription_id = ${sql.ref(`${as}.subscription_id`)} and o.object_id = ${sql.ref(`${as}.object_id`)} and o.event_seq < ${sql.ref(`${as}.event_seq`)})`;

/**
 * The first `limit` due rows in event order whose object has no earlier event waiting for the same
 * subscription, of subscriptions that are not failing (`probes` takes theirs). The walk follows
 * the index of the rows not parked (`webhook_deliveries_walk`: a failing endpoint's are parked)
 * and stops at `limit` rows, so a claim reads the rows in flight ahead of them and no more,
 * whatever the backlog, a failing endpoint's included (test/guards/webhook-claim-plan). The
 * condition is written as a literal: SQLite uses a partial index only for a term that matches it.
 */
export function dueInOrder(db: Executor, limit: number) {
  const due = db
    .selectFrom('webhook_deliveries as d')
    .select('d.id')
    .where(sql<boolean>`d.parked = 0`)
    .where('d.next_attempt_at', '<=', timeFromNow(db, 0))
    .where(firstOfObject('d'))
    .where(sql<boolean>`not exists (select 1 from webhook_subscriptions as f where f.id = d.subscription_id and f.failing_since is not null)`)
    .orderBy('d.event_seq')
    .limit(limit);
  return claimable(db, due);
}

/**
 * One due row (in order per object) of each of at most `n` failing subscriptions, picked at
 * random among them: a failing endpoint is tried one delivery at a time, so that its backlog,
 * however old, never fills the claims that every other endpoint's deliveries wait for
 * (docs/events.md §Delivery). The first success makes it healthy again, its rows `dueInOrder`'s.
 * Each probe walks its endpoint's due rows by due time (the index `webhook_deliveries_probe`),
 * never the rows whose retry is backed off (test/guards/webhook-claim-plan).
 */
export function probes(db: Executor, n: number) {
  const probe = sql<string>`(select p.id from webhook_deliveries as p
    where p.subscription_id = s.id and p.next_attempt_at <= ${timeFromNow(db, 0)} and ${firstOfObject('p')}
    order by p.next_attempt_at limit 1)`;
  const picked = sql`select c.id from (select ${probe} as id from webhook_subscriptions as s
    where s.failing_since is not null and s.disabled_at is null) as c where c.id is not null order by random() limit ${n}`;
  return claimable(
    db,
    db
      .selectFrom('webhook_deliveries as d')
      .select('d.id')
      .where(sql<boolean>`d.id in (${picked})`),
  );
}

/**
 * Unparks the oldest `n` parked rows of each endpoint that is not failing (any more): an endpoint
 * that answers again gets its backlog back in event order, `n` rows a claim, so its rows outside
 * the parking stay about as many as a claim takes, and parking them again, should it fail again,
 * costs no more. Each endpoint's rows are found through `webhook_deliveries_parked`.
 */
export async function unparkRecovered(db: Executor, n: number): Promise<void> {
  const recovered = await db
    .selectFrom('webhook_subscriptions as s')
    .select('s.id')
    .where('s.failing_since', 'is', null)
    .where(sql<boolean>`exists (select 1 from webhook_deliveries as p where p.subscription_id = s.id and p.parked = 1)`)
    .execute();
  for (const { id } of recovered)
    await db
      .updateTable('webhook_deliveries')
      .set({ parked: 0 })
      .where(
        'id',
        'in',
        db
          .selectFrom('webhook_deliveries as p')
          .select('p.id')
          .where('p.subscription_id', '=', id)
          .where(sql<boolean>`p.parked = 1`)
          .orderBy('p.event_seq')
          .limit(n),
      )
      .execute();
}

/**
 * Claims for `token` for `leaseMs` up to `limit` due rows of healthy subscriptions and one of each
 * of up to `probes` failing ones; `attempts` counts this one.
 */
export async function claimDue(db: Executor, input: { token: string; leaseMs: number; limit: number; probes?: number }): Promise<DeliveryRow[]> {
  // A read first: an idle outbox costs no write (on SQLite, no write lock every poll).
  const any = await db.selectFrom('webhook_deliveries').select('id').where('next_attempt_at', '<=', timeFromNow(db, 0)).limit(1).executeTakeFirst();
  if (!any) return [];
  await unparkRecovered(db, input.limit);
  const healthy = dueInOrder(db, input.limit);
  const failing = probes(db, input.probes ?? 1);
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: input.token, next_attempt_at: timeFromNow(db, input.leaseMs), attempts: sql<number>`attempts + 1` })
    // One list of ids, not two IN tests joined by OR: PostgreSQL would test every row of the
    // outbox against both instead of reading the ids' rows by key.
    .where(sql<boolean>`id in (select h.id from (${healthy}) as h union all select f.id from (${failing}) as f)`)
    .returningAll()
    .execute();
  return rows.sort((a, b) => Number(a.event_seq) - Number(b.event_seq));
}

/** Extends the lease of the rows `token` still holds; returns their ids. */
export async function renewLease(db: Executor, token: string, leaseMs: number): Promise<string[]> {
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: timeFromNow(db, leaseMs) })
    .where('lease_owner', '=', token)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Gives back rows not tried: due at once, this attempt uncounted. */
export async function release(db: Executor, token: string, ids: readonly string[]): Promise<void> {
  for (const part of chunks([...ids]))
    await db
      .updateTable('webhook_deliveries')
      .set({ lease_owner: null, next_attempt_at: timeFromNow(db, 0), attempts: sql<number>`attempts - 1` })
      .where('lease_owner', '=', token)
      .where('id', 'in', part)
      .execute();
}
