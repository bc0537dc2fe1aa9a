// Query plans, for the guards that pin them (test/guards/):
// - `sqlitePlan`: the steps of SQLite's EXPLAIN QUERY PLAN of a statement.
// - `genericPlan`: on PostgreSQL, EXPLAIN ANALYZE of the generic plan of a statement, the plan a
//   named statement keeps for any values after five runs (docs/filtering.md §Plans).
// - `work` and `scans`: what the nodes of such a plan handled, to bound it.
// - `indexPlan`: either database's plan of a statement as text, on tables too small for
//   PostgreSQL to want an index unless told not to scan them (the migrations' tests); `planText`
//   the plan as the planner chooses it, on tables filled for the test.
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { Database, DialectName } from '../../src/db/types.ts';
import { write } from '../../src/db/write.ts';

/** EXPLAIN of `compiled` in the dialect's words: SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN. */
function explain(dialect: DialectName, compiled: CompiledQuery): CompiledQuery {
  return CompiledQuery.raw(`explain ${dialect === 'postgres' ? '' : 'query plan '}${compiled.sql}`, [...compiled.parameters]);
}

const asText = (rows: readonly Record<string, string>[]) => rows.map((x) => Object.values(x).join(' ')).join('\n');

/**
 * The plan of `compiled` as text, one step or node a line, as the planner chooses it on the rows
 * the test wrote (enough of them that a scan would cost what it would in use).
 */
export async function planText(db: Kysely<Database>, dialect: DialectName, compiled: CompiledQuery): Promise<string> {
  return asText((await db.executeQuery<Record<string, string>>(explain(dialect, compiled))).rows);
}

/**
 * The plan of `compiled` as text, one step or node a line: SQLite's EXPLAIN QUERY PLAN, or
 * PostgreSQL's EXPLAIN with table scans disabled, so that on a few rows it still takes an index
 * it can prove usable, and only such an index.
 */
export async function indexPlan(db: Kysely<Database>, dialect: DialectName, compiled: CompiledQuery): Promise<string> {
  const postgres = dialect === 'postgres';
  return db.connection().execute(async (c) => {
    if (postgres) await c.executeQuery(CompiledQuery.raw('set enable_seqscan = off'));
    const r = await c.executeQuery<Record<string, string>>(explain(dialect, compiled));
    if (postgres) await c.executeQuery(CompiledQuery.raw('reset enable_seqscan'));
    return asText(r.rows);
  });
}

/** A node of PostgreSQL's `explain (analyze, format json)`: the fields the guards read. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The detail of each step of SQLite's plan of `text` with `params`, in order. */
export async function sqlitePlan(db: Kysely<Database>, text: string, params: readonly unknown[] = []): Promise<string[]> {
  const r = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...params]));
  return r.rows.map((row) => row.detail);
}

/** `p` as an SQL literal: the values of an EXECUTE, which takes no bound parameters. */
function literal(p: unknown): string {
  if (p === null || p === undefined) return 'null';
  if (typeof p === 'number' || typeof p === 'bigint') return String(p);
  if (typeof p === 'string') return `'${p.replaceAll("'", "''")}'`;
  throw new Error(`no literal for a parameter of type ${typeof p}`);
}

let prepared = 0;

/**
 * The root node of EXPLAIN ANALYZE of the generic plan of `text` run with `params` (its `$n`
 * values, as literals): prepared and executed in one transaction under
 * `plan_cache_mode = force_generic_plan`, since the setting and the prepared statement live on
 * its connection only. ANALYZE runs the statement and the transaction commits: for reads only.
 * Each call prepares under a name of its own: a failed EXPLAIN aborts the transaction before the
 * statement is deallocated, and a later call on the same pooled connection must not fail on its name.
 */
export async function genericPlan(db: Kysely<Database>, text: string, params: readonly unknown[]): Promise<PlanNode> {
  const name = `guard_generic_${++prepared}`;
  return write(db, async (tx) => {
    await sql`set local plan_cache_mode = force_generic_plan`.execute(tx);
    await tx.executeQuery(CompiledQuery.raw(`prepare ${name} as ${text}`));
    const r = await tx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      CompiledQuery.raw(`explain (analyze, format json) execute ${name}(${params.map(literal).join(', ')})`),
    );
    await tx.executeQuery(CompiledQuery.raw(`deallocate ${name}`));
    return r.rows[0]!['QUERY PLAN'][0]!.Plan;
  });
}

/**
 * The rows every node of `plan` returned over all its loops, summed; with `removed`, the rows its
 * filters read and dropped too (a scan that filters out most of a table handled all of it).
 */
export function work(plan: PlanNode, opts: { removed?: boolean } = {}): number {
  const own = plan['Actual Rows'] + (opts.removed ? (plan['Rows Removed by Filter'] ?? 0) : 0);
  return own * plan['Actual Loops'] + (plan.Plans ?? []).reduce((s, c) => s + work(c, opts), 0);
}

/** The nodes of `plan` that read a relation (scans of a table or an index), depth first. */
export function* scans(plan: PlanNode): Generator<PlanNode & { 'Relation Name': string }> {
  if (plan['Relation Name']) yield plan as PlanNode & { 'Relation Name': string };
  for (const c of plan.Plans ?? []) yield* scans(c);
}
