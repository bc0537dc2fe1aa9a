// The statements of a filtered listing on PostgreSQL under a generic plan (docs/filtering.md
// §Plans): a named statement is planned once for any values after five runs, and a generic plan
// estimates a filter's rows without its values. Every probe of a record by a filter (EXISTS, NOT
// EXISTS) stays a probe per record through its index, whatever the estimates: planned as a join
// instead, a negated filter's page scanned the value index once per record it walked (a page of
// 20,000 tasks went past the 5 s statement timeout). Checked with EXPLAIN ANALYZE of each
// statement under plan_cache_mode = force_generic_plan: no plan node handles many times the rows
// the page walks or matches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type RawBuilder, sql } from 'kysely';
import { rankRebuildAll } from '../../src/db/rank/index.ts';
import { loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { parseFilters, planFilters } from '../../src/records/filter/service.ts';
import { type Ctx, operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { valueRows } from '../../src/records/index/values.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { genericPlan, work } from '../helpers/plans.ts';

const TASKS = 3000;
const STATUSES = ['TODO', 'IN_PROGRESS', 'COMPLETE', 'CANCELLED'];
const T0 = Date.UTC(2026, 0, 1);

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`filtered pages under a generic plan [${dialect}]`, () => {
    let tdb: TestDb;
    let ctx: Ctx;
    let defs: TypeDefinitions;
    const member = 'usr_member3';
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      const ws = (await createWorkspace(systemCtx(db), { name: 'generic plans' })).id;
      ctx = operatorCtx(db, ws);
      defs = (await loadDefinitions(ctx, { objectType: 'task' }))!;
      const records = [];
      const values = [];
      const links = [];
      for (let j = 0; j < TASKS; j++) {
        const id = `tsk_${String(j).padStart(6, '0')}`;
        const at = new Date(T0 + j * 1000).toISOString();
        const v = { $title: `Task ${j}`, $status: STATUSES[Math.floor(j / 7) % 4] };
        records.push({ id, workspace_id: ws, kind: 'task', external_id: null, fields: JSON.stringify(v), created_at: at, updated_at: at });
        values.push(...valueRows(ws, defs, id, v));
        links.push({ source_id: id, name: '$assignedTo', object_type: 'member', target_id: `usr_member${j % 20}`, position: 0 });
      }
      for (let i = 0; i < TASKS; i += 500) {
        await db
          .insertInto('records')
          .values(records.slice(i, i + 500))
          .execute();
        await db
          .insertInto('record_values')
          .values(values.slice(i * 2, (i + 500) * 2))
          .execute();
        await db
          .insertInto('entity_relationships')
          .values(links.slice(i, i + 500))
          .execute();
      }
      await rankRebuildAll(db, RECORDS);
      await sql`analyze`.execute(db);
    });
    after(() => tdb.drop());

    /** The rows every node of one statement's generic plan returned, summed. */
    async function genericWork(q: RawBuilder<unknown>): Promise<number> {
      const c = q.compile(tdb.db.kysely);
      return work(await genericPlan(tdb.db.kysely, c.sql, c.parameters));
    }

    async function statements(query: Record<string, string>, offset: number): Promise<[string, RawBuilder<unknown>][]> {
      const plan = await planFilters(ctx, { defs, filters: parseFilters(query, defs), page: { limit: 25, offset } });
      if (plan.kind === 'negated') return [['page', plan.page], ...(plan.excluded ? [['excluded', plan.excluded] as [string, RawBuilder<unknown>]] : [])];
      return [
        ['sorted', plan.sorted],
        ['count', plan.count],
        ['walk', plan.walk(offset + 1000)],
      ];
    }

    const cases: [string, Record<string, string>, number][] = [
      ['a negated status, deep', { '$status[-equal]': 'COMPLETE' }, 1500],
      ['a status, first page', { $status: 'TODO' }, 0],
      ['a status, deep', { $status: 'TODO' }, 600],
      ['a member, deep', { $assignedTo: member }, 100],
      ['a status and a member', { $status: 'TODO', $assignedTo: member }, 20],
      ['a member, negated status', { $assignedTo: member, '$status[-equal]': 'TODO' }, 20],
    ];
    for (const [what, query, offset] of cases) {
      test(`${what}: no node handles more than a few times the task count`, async () => {
        for (const [name, q] of await statements(query, offset)) {
          const n = await genericWork(q);
          assert.ok(n <= 10 * TASKS, `${name} of ${JSON.stringify(query)} at offset ${offset}: ${n} rows handled`);
        }
      });
    }
  });
}
