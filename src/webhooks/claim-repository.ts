// SQL of the webhook dispatcher's claim (docs/events.md §Delivery): which due deliveries a round
// takes, under a token with a lease, and gives back. A row is claimable only when no earlier event
// of the same object waits for the same subscription, so each object's events arrive in order; a
// claim shares its rows among the endpoints with due rows, so no backlog fills it.
import { type RawBuilder, sql } from 'kysely';
import { amongKeys, chunks, claimable, joinedByKey, timeFromNow, type Executor } from '../db/index.ts';
import type { DeliveryRow } from './repository.ts';

/** Whether `d`'s row is the oldest waiting of its object for its subscription (in order per object). */
const firstOfObject = (as: string) =>
  sql<boolean>`not exists (select 1 from webhook_deliveries as o
    where o.subscription_id = ${sql.ref(`${as}.subscription_id`)} and o.object_id = ${sql.ref(`${as}.object_id`)} and o.event_seq < ${sql.ref(`${as}.event_seq`)})`;

/**
 * Up to `limit` due rows (in order per object) of subscriptions that are not failing (`probes`
 * takes theirs), shared among them (docs/events.md §Delivery): each subscription's first row
 * before any subscription's second, and so on, the older event first at each turn, so that an
 * endpoint's backlog, however long, takes only the rows the others leave. When more than `limit`
 * subscriptions have due rows, `limit` of them picked at random take one each.
 *
 * Its cost follows the subscriptions with rows outside the parking and the rows it claims, not
 * any backlog (test/guards/webhook-claim-plan): the subscriptions are found by a skip scan of
 * `webhook_deliveries_queue` (one probe each), and each of them is walked in event order through
 * it, a probe a row, for at most twice its share of `limit` (a subscription with fewer due rows
 * leaves its share to the others, and a claim beside another has rows left to take), stepping
 * over its rows in flight only. The conditions on `parked` are written as literals: SQLite uses a
 * partial index only for a term that matches it.
 */
export function dueShared(db: Executor, limit: number) {
  // The first due row after `after` of the subscription `sub`, by event order.
  const next = (sub: string, after: RawBuilder<unknown>) => sql`(select q.event_seq from webhook_deliveries as q
    where q.subscription_id = ${sql.ref(sub)} and q.parked = 0 and q.event_seq > ${after}
      and q.next_attempt_at <= ${timeFromNow(db, 0)} and ${firstOfObject('q')}
    order by q.event_seq limit 1)`;
  // The first subscription after `after` with rows outside the parking: one probe of the index.
  const subscription = (after: RawBuilder<unknown>) => sql`(select q.subscription_id from webhook_deliveries as q
    where q.parked = 0 and q.subscription_id > ${after} order by q.subscription_id, q.event_seq limit 1)`;
  const candidates = sql<{ id: string; n: number; seq: number }>`(with recursive
      subs(id) as (select ${subscription(sql`''`)} union all select ${subscription(sql.ref('subs.id'))} from subs where subs.id is not null),
      firsts(sub, seq) as materialized (select subs.id, ${next('subs.id', sql`0`)} from subs
        where not exists (select 1 from webhook_subscriptions as f where f.id = subs.id and f.failing_since is not null)),
      heads(sub, seq) as (select sub, seq from firsts where seq is not null order by random() limit ${limit}),
      share(k) as (select ${2 * limit} / nullif(count(*), 0) from heads),
      walk(sub, seq, n) as (select sub, seq, 1 from heads
        union all select w.sub, ${next('w.sub', sql.ref('w.seq'))}, w.n + 1 from walk as w where w.seq is not null and w.n < (select k from share))
    select (select d.id from webhook_deliveries as d where d.subscription_id = walk.sub and d.parked = 0 and d.event_seq = walk.seq) as id,
      walk.n, walk.seq from walk where walk.seq is not null order by walk.n, walk.seq limit ${2 * limit})`;
  // Tested again on the row it locks: a row another claim took meanwhile is no longer due.
  const due = db
    .selectFrom('webhook_deliveries as c')
    .select('c.id')
    .where(sql<boolean>`c.parked = 0`)
    .where('c.next_attempt_at', '<=', timeFromNow(db, 0));
  // Twice the rows a claim takes, locked in turn until it has them: a claim beside another one
  // (PostgreSQL) takes the rows the other holds no lock on, not none. Each candidate's row is
  // found by its id, never by a read of every due row (docs/design.md §Database statistics).
  return claimable(
    db,
    joinedByKey(db, db.selectFrom(candidates.as('w')), due, 'c', { probeKey: 'c.id', outerKey: 'w.id' })
      .select('c.id')
      .orderBy('w.n')
      .orderBy('w.seq')
      .limit(limit),
  );
}

/**
 * One due row (in order per object) of each of at most `n` failing subscriptions, picked at
 * random among them: a failing endpoint is tried one delivery at a time, so that its backlog,
 * however old, never fills the claims that every other endpoint's deliveries wait for
 * (docs/events.md §Delivery). The first success makes it healthy again, its rows `dueShared`'s.
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
 * Claims for `token` for `leaseMs` up to `limit` due rows of healthy subscriptions, shared among
 * them, and one of each of up to `probes` failing ones; `attempts` counts this one. The rows come
 * in turns, each subscription's first row before any second (each turn in event order), the order
 * a round works them in: an endpoint's row waits for no other endpoint's backlog in the round.
 */
export async function claimDue(db: Executor, input: { token: string; leaseMs: number; limit: number; probes?: number }): Promise<DeliveryRow[]> {
  // A read first: an idle outbox costs no write (on SQLite, no write lock every poll).
  const any = await db.selectFrom('webhook_deliveries').select('id').where('next_attempt_at', '<=', timeFromNow(db, 0)).limit(1).executeTakeFirst();
  if (!any) return [];
  await unparkRecovered(db, input.limit);
  const healthy = dueShared(db, input.limit);
  const failing = probes(db, input.probes ?? 1);
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: input.token, next_attempt_at: timeFromNow(db, input.leaseMs), attempts: sql<number>`attempts + 1` })
    // One list of ids, not two IN tests joined by OR: PostgreSQL would test every row of the
    // outbox against both instead of reading the ids' rows by key; each id's row found by its key.
    .where(amongKeys(db, 'id', sql`select h.id from (${healthy}) as h union all select f.id from (${failing}) as f`))
    .returningAll()
    .execute();
  return inTurns(rows);
}

/** `rows` in turns: each subscription's n-th row (in event order) before any (n+1)-th. */
function inTurns(rows: DeliveryRow[]): DeliveryRow[] {
  const bySeq = rows.sort((a, b) => Number(a.event_seq) - Number(b.event_seq));
  const seen = new Map<string, number>();
  const turn = new Map<DeliveryRow, number>();
  for (const r of bySeq) {
    const n = seen.get(r.subscription_id) ?? 0;
    seen.set(r.subscription_id, n + 1);
    turn.set(r, n);
  }
  // A stable sort: within a turn, event order.
  return bySeq.sort((a, b) => turn.get(a)! - turn.get(b)!);
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
