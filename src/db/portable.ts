// The SQL that differs between SQLite and PostgreSQL, said once for each need. The modules ask for
// what they mean (a time from now, a row claimed by one worker, code point order); which database
// they talk to is this layer's business, never theirs (docs/architecture.md §Database layer).
import { setTimeout as sleep } from 'node:timers/promises';
import { type Compilable, CompiledQuery, type Insertable, type RawBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import { isPostgres } from './dialect.ts';
import { deferredInsert, deferredInsertRows } from './pipeline.ts';
import { bindOnce } from './prepared.ts';
import type { Database, Executor, Tx } from './types.ts';
import { lockKey } from './rank/lock.ts';
import { txState } from './write.ts';

/** The database's time `plusMs` from now, in the stored format (UTC, milliseconds, `Z`). */
export function timeFromNow(db: Executor, plusMs: number): RawBuilder<string> {
  const ms = Math.round(plusMs);
  if (isPostgres(db)) return sql<string>`to_char((now() + cast(${`${ms} milliseconds`} as interval)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${`${ms >= 0 ? '+' : ''}${ms / 1000} seconds`})`;
}

/**
 * The rows a worker claims: on PostgreSQL each locked by the first claimer and skipped by the
 * others, so that two processes never claim one row. SQLite has one writer at a time, which is
 * the same guarantee.
 */
export function claimable<DB, TB extends keyof DB, O>(db: Executor, q: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return isPostgres(db) ? q.forUpdate().skipLocked() : q;
}

/**
 * Rows a transaction goes on to update or delete: on PostgreSQL locked until it ends, so that a
 * second writer of them waits for it. Outside a transaction, or on SQLite (one writer at a time),
 * as they are.
 */
export function lockedForUpdate<DB, TB extends keyof DB, O>(db: Executor, q: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return db.isTransaction && isPostgres(db) ? q.forUpdate() : q;
}

/**
 * Rows a transaction reads, changes and writes back (a record's stored fields and its own
 * relationship rows): on PostgreSQL locked until it ends, so that a second writer of them waits and
 * then reads what the first committed, never an older version to write back over it. The lock
 * (`FOR NO KEY UPDATE`) leaves them free to be linked to (`lockedAgainstDelete`) meanwhile.
 * Outside a transaction, or on SQLite (one writer at a time), as they are.
 */
export function lockedForChange<DB, TB extends keyof DB, O>(db: Executor, q: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return db.isTransaction && isPostgres(db) ? q.forNoKeyUpdate() : q;
}

/**
 * Rows a write relies on: in a transaction on PostgreSQL they stay locked against deletion until
 * it commits. Outside a transaction, or on SQLite (one writer at a time), as they are.
 */
export function lockedAgainstDelete<DB, TB extends keyof DB, O>(db: Executor, q: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return db.isTransaction && isPostgres(db) ? q.forKeyShare() : q;
}

/** The pause between two tries of a named lock taken exclusively (`holdNamedLock`). */
const NAMED_LOCK_PAUSE_MS = 25;

/**
 * Serializes the transactions that take the lock `name`: on PostgreSQL each waits, at this call,
 * for the one holding it to end (an advisory lock, `lockKey`), so that what it reads next includes
 * what that one committed. Taken `shared`, it lets the others taking it shared run side by side,
 * and waits only for (and is waited for by) those holding it exclusively. Taken once per
 * transaction: one that holds it shared does not take it exclusively later (two such would wait
 * for each other). SQLite has one writer at a time, which is the same guarantee.
 *
 * Taken exclusively, it is tried, and tried again after a pause while a holder has it, rather than
 * waited for: PostgreSQL queues a request behind a waiting one that conflicts with it, so a taker
 * waiting for a long shared holder (an atomic import) would have every later shared taker (an API
 * merge) wait behind it until that holder ends. Shared takers thus never wait for an exclusive
 * taker that does not hold the lock yet, which may wait for as long as shared holders follow each
 * other. Since PostgreSQL sees no wait, it cannot find a deadlock through one: an exclusive taker
 * takes the lock first in its transaction, holding nothing another transaction may wait for
 * (docs/records.md §Definitions).
 */
export async function holdNamedLock(tx: Tx, name: string, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<void> {
  if (!isPostgres(tx)) return;
  const held = txState(tx)?.held;
  const scope = `named:${name}`;
  const before = held?.get(scope);
  if (before === 'write' || (before === 'insert' && mode === 'shared')) return;
  if (before === 'insert') throw new Error(`${scope} was taken shared; a transaction that also takes it exclusively takes it so first`);
  held?.set(scope, mode === 'shared' ? 'insert' : 'write');
  if (mode === 'shared') {
    await tx.executeQuery(CompiledQuery.raw(`select pg_advisory_xact_lock_shared(${lockKey(scope)})`));
    return;
  }
  const attempt = CompiledQuery.raw(`select pg_try_advisory_xact_lock(${lockKey(scope)}) as taken`);
  while (!(await tx.executeQuery<{ taken: boolean }>(attempt)).rows[0]?.taken) await sleep(NAMED_LOCK_PAUSE_MS);
}

/**
 * A FROM item holding one row per element of a JSON array of strings `json`, each as
 * `<alias>.value` (text). It may name columns of the items before it.
 */
export function jsonTextElements(db: Executor, json: RawBuilder<unknown>, alias: string): RawBuilder<unknown> {
  return isPostgres(db) ? sql`jsonb_array_elements_text(cast(${json} as jsonb)) as ${sql.id(alias)}(value)` : sql`json_each(${json}) as ${sql.id(alias)}`;
}

/**
 * An aggregate: the JSON text of an array holding, for each row of the group in `orderBy`'s
 * order, the array of `items`; null for no rows. Both databases hand over the same string.
 */
export function jsonArraysAgg(db: Executor, items: RawBuilder<unknown>[], orderBy: RawBuilder<unknown>): RawBuilder<string | null> {
  const list = sql.join(items);
  return isPostgres(db)
    ? sql<string | null>`json_agg(json_build_array(${list}) order by ${orderBy})::text`
    : sql<string | null>`json_group_array(json_array(${list}) order by ${orderBy})`;
}

/**
 * Ends a correlated subquery (an EXISTS or NOT EXISTS) that must run as written: a probe through
 * an index for each outer row. PostgreSQL otherwise turns it into a join planned from estimates,
 * and a generic plan (a named statement after five runs) estimates without the bound values: it
 * may then read the subquery's table once for every outer row (docs/filtering.md §Plans).
 * `OFFSET 0` keeps the subquery as it is; SQLite runs such a subquery per row anyway.
 */
export function probeEnd(db: Executor): RawBuilder<unknown> {
  return isPostgres(db) ? sql` offset 0` : sql``;
}

/**
 * The rows `d` of `driver` (a subquery with a `keyColumn`), each joined to its row `r` of `table`
 * found by primary key `id`, with the driver read first whatever the statistics (docs/filtering.md
 * §Plans): `(driver) d cross join table r`, the caller's condition saying `r.id = d.keyColumn`.
 * SQLite keeps a CROSS JOIN in the written order. PostgreSQL may reorder a join from estimates: on
 * statistics taken while a table was small it may walk the table and probe the driver for each of
 * its rows. There a lateral subquery kept as written (`OFFSET 0`) can only be one probe an id; it
 * gives `columns` of `r`.
 */
export function eachByKey(db: Executor, driver: RawBuilder<unknown>, keyColumn: string, table: string, columns: readonly string[]): RawBuilder<unknown> {
  if (!isPostgres(db)) return sql`(${driver}) d cross join ${sql.table(table)} r`;
  const picked = sql.join(columns.map((c) => sql.ref(`r.${c}`)));
  return sql`(${driver}) d cross join lateral (select ${picked} from ${sql.table(table)} r where r.id = ${sql.ref(`d.${keyColumn}`)} offset 0) r`;
}

/**
 * `column` among the keys `keys` (a subquery) gives, each row found through the index of
 * `column` whatever the statistics say (docs/design.md §Database statistics). PostgreSQL plans an
 * IN over a subquery as a join from estimates, and on a table never analyzed it may scan the
 * whole table and test every row against every key; `= any(array(…))` computes the keys first and
 * looks each one up. SQLite looks each key up anyway.
 */
export function amongKeys(db: Executor, column: string, keys: RawBuilder<unknown>): RawBuilder<SqlBool> {
  return isPostgres(db) ? sql<SqlBool>`${sql.ref(column)} = any(array(${keys}))` : sql<SqlBool>`${sql.ref(column)} in (${keys})`;
}

/**
 * `q` with, for each of its rows, the row `probe` finds whose key (`probeKey`, `alias.column` of a
 * unique column `probe` selects) equals the row's `outerKey`: found through that key's index for
 * each row of `q`, whatever the statistics say (docs/design.md §Database statistics). PostgreSQL
 * otherwise plans the join from estimates, and on a table never analyzed it read every row meeting
 * `probe`'s conditions and compared each with each row of `q`; on PostgreSQL `probe` is a lateral
 * subquery kept as written (`OFFSET 0`), and a row lock of `q` applies to it, its conditions tested
 * again on the row it locks. SQLite joins the table on the key.
 */
export function joinedByKey<DB, TB extends keyof DB, O, PDB, PTB extends keyof PDB, A extends string, P>(
  db: Executor,
  q: SelectQueryBuilder<DB, TB, O>,
  probe: SelectQueryBuilder<PDB, PTB, P>,
  alias: A,
  keys: { probeKey: string; outerKey: string },
): SelectQueryBuilder<DB & Record<A, P>, TB | A, O> {
  const column = keys.probeKey.slice(keys.probeKey.indexOf('.') + 1);
  // Kysely cannot type a join whose table is a type parameter: the joins are typed by the signature.
  const loose = q as unknown as SelectQueryBuilder<Database, keyof Database, O>;
  const inner = probe as unknown as SelectQueryBuilder<Database, keyof Database, P>;
  const joined = isPostgres(db)
    ? loose.innerJoinLateral(inner.where(sql.ref(keys.probeKey), '=', sql.ref(keys.outerKey)).modifyEnd(probeEnd(db)).as(alias), (j) => j.onTrue())
    : loose.innerJoin(inner.as(alias), (j) => j.on(sql.ref(`${alias}.${column}`), '=', sql.ref(keys.outerKey)));
  return joined as unknown as SelectQueryBuilder<DB & Record<A, P>, TB | A, O>;
}

/**
 * One row inserted into `table`, then a statement over it that only inserts new rows too (`then`,
 * whose rows come back as `deferredInsertRows`'s do). `then(source)` reads the row from `source`
 * and picks it by its key itself: on PostgreSQL `source` holds only the inserted row (the insert
 * is a data-modifying CTE of the same statement), so the statement never reads the table, whose
 * statistics may date from when it was small (docs/design.md §Database statistics), and a write
 * pays one statement for both; elsewhere `source` is the table, into which the row went a
 * statement before.
 */
export function deferredInsertThen<T extends keyof Database, R>(
  tx: Tx,
  table: T,
  row: Insertable<Database[T]>,
  then: (source: RawBuilder<unknown>) => RawBuilder<R>,
): Promise<{ readonly rows?: R[] }> {
  return sendInsertThen<R>(tx, insertThen(tx, table, row, then));
}

type InsertThen<T extends keyof Database, R> = { row: Insertable<Database[T]>; then: (source: RawBuilder<unknown>) => RawBuilder<R> };

/**
 * `deferredInsertThen` for a hot write whose statements never change shape (an API write's event):
 * `build` gives the row and the statement over it from its arguments, and is built and compiled
 * once per dialect, each call only binding the arguments (`preparedWrite`, src/db/prepared.ts, and
 * its rules for `build`).
 */
export function preparedInsertThen<T extends keyof Database, A extends unknown[], R>(table: T, build: (db: Executor, ...args: A) => InsertThen<T, R>) {
  const bind = bindOnce((db: Executor, ...args: A) => {
    const { row, then } = build(db, ...args);
    return insertThen(db, table, row, then).map((part) => ({ compile: () => ('isRawBuilder' in part ? part.compile(db) : part.compile()) }));
  }, build.length - 1);
  return (tx: Tx, ...args: A): Promise<{ readonly rows?: R[] }> => sendInsertThen<R>(tx, bind(tx, args));
}

/** The statements of an insert and a statement over its row: one on PostgreSQL, two elsewhere. */
function insertThen<T extends keyof Database, R>(db: Executor, table: T, row: Insertable<Database[T]>, then: InsertThen<T, R>['then']): Statement[] {
  const insert = db.insertInto(table).values(row);
  if (isPostgres(db)) return [sql<R>`with inserted as (${insert.returningAll()}) ${then(sql`inserted`)}`];
  return [insert, then(sql.table(table))];
}

type Statement = Compilable | RawBuilder<unknown>;

/** Sends the statements of `insertThen`: the last one's rows are the caller's. */
function sendInsertThen<R>(tx: Tx, statements: readonly Statement[]): Promise<{ readonly rows?: R[] }> {
  const [first, second] = statements as [Statement, Statement?];
  if (second === undefined) return deferredInsertRows(tx, first as Compilable<R>);
  return deferredInsert(tx, first).then(() => deferredInsertRows(tx, second as Compilable<R>));
}

/**
 * Whether `column`'s text holds `text` as written, character for character. Not LIKE, whose `_`
 * and `%` in `text` would match other characters (an id's `_` any one), and which ignores the case
 * of ASCII letters on SQLite: a purge finds what names a record's id by it (docs/trash.md §Purge),
 * and a look-alike of the id is another row's.
 */
export function holdsText(db: Executor, column: string, text: string): RawBuilder<SqlBool> {
  return isPostgres(db) ? sql<SqlBool>`strpos(${sql.ref(column)}, ${text}) > 0` : sql<SqlBool>`instr(${sql.ref(column)}, ${text}) > 0`;
}

/**
 * How many texts a statement tests with holdsText, at most, before reading the rows' text into the
 * process once and testing it there for all of them (`holdsAny`) costs less: each holdsText
 * searches every row's text again, while the process pays for reading the text once, more on
 * PostgreSQL, where it crosses the connection (docs/performance.md §Trash and merges).
 */
export function fewTexts(db: Executor): number {
  return isPostgres(db) ? 16 : 2;
}
