// 40,000 tasks written straight into storage for the ranked-value guards: statuses in turn (or
// bunched), one second apart, their value rows, their ranked status sets as writeValueIndex writes
// them, every set counted once, and the planner's statistics.
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { rankRebuildAll } from '../../src/db/rank/index.ts';
import { loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { FACETS } from '../../src/records/index/facets.ts';
import { valueRows } from '../../src/records/index/values.ts';
import { RECORDS, type RecordRow } from '../../src/records/repository.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import type { TestDb } from './db.ts';

export const TASKS = 40_000;
const STATUSES = ['TODO', 'IN_PROGRESS', 'COMPLETE', 'CANCELLED'];
const T0 = Date.UTC(2026, 0, 1);

/**
 * `bunched`: the newest quarter TODO and the older tasks the other three statuses in turn, as where
 * the new work is still to do (a quarter TODO either way).
 */
export async function seedRankedTasks(tdb: TestDb, name: string, opts: { bunched?: boolean } = {}): Promise<{ ws: string; defs: TypeDefinitions }> {
  const db = tdb.db.kysely;
  const ws = (await createWorkspace(systemCtx(db), { name })).id;
  const defs = (await loadDefinitions(operatorCtx(db, ws), { objectType: 'task' }))!;
  for (let i = 0; i < TASKS; i += 2000) {
    const records: RecordRow[] = [];
    const values: ReturnType<typeof valueRows> = [];
    for (let j = i; j < i + 2000; j++) {
      const id = `tsk_${String(j).padStart(6, '0')}`;
      const at = new Date(T0 + j * 1000).toISOString();
      const v = { $title: `Task ${j}`, $status: !opts.bunched ? STATUSES[j % 4] : j >= (TASKS * 3) / 4 ? 'TODO' : STATUSES[1 + (j % 3)] };
      records.push({ id, workspace_id: ws, kind: 'task', external_id: null, fields: JSON.stringify(v), created_at: at, updated_at: at });
      values.push(...valueRows(ws, defs, id, v));
    }
    await write(db, async (tx) => {
      for (let k = 0; k < records.length; k += 500)
        await tx
          .insertInto('records')
          .values(records.slice(k, k + 500))
          .execute();
      for (let k = 0; k < values.length; k += 800)
        await tx
          .insertInto('record_values')
          .values(values.slice(k, k + 800))
          .execute();
    });
  }
  await sql`insert into record_facets (workspace_id, object_type, field, value_text, created_at, record_id)
    select v.workspace_id, v.object_type, v.field, v.value_text, r.created_at, r.id from record_values v join records r on r.id = v.record_id
    where v.field = '$status'`.execute(db);
  await rankRebuildAll(db, RECORDS);
  await rankRebuildAll(db, FACETS);
  await sql`analyze`.execute(db);
  return { ws, defs };
}
