// Mixed writes at once on both databases: a random plan (fast-check, CHAOS_SEED, printed with every
// failure) of creates, updates and deletes of accounts, contacts, notes and lists with links between
// them, list members added and removed, merges, trash restores and purges beside the sweeper's
// retention, file upload sessions, writes of a unique field colliding on purpose, creates repeating
// idempotency keys, small imports and reads, CHAOS_OPS of them over three workspaces, CHAOS_CONCURRENCY
// at a time. No answer is a 5xx or undocumented (docs/errors.md), and afterwards the invariants of
// chaos-verify.ts hold: pages count what they list, links are live on both ends or held in the
// trash (docs/records.md, docs/trash.md), history and events record each acknowledged write once
// and in order (docs/history.md, docs/events.md), one idempotency key made one record, and the
// trash restores, after which pages and links hold again.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { loadDocument, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';
import { checkEvents, checkHistory, checkIdempotency, checkWorkspace, restoreAll } from './chaos-verify.ts';
import { planArb, type Run, runOp, runPlan, TYPES, type World } from './chaos-workload.ts';

const SEED = Number(process.env.CHAOS_SEED ?? 20260303);
const OPS = Number(process.env.CHAOS_OPS ?? 400);
const CONCURRENCY = Number(process.env.CHAOS_CONCURRENCY ?? 16);
const WORKSPACES = 3;

const CODE = {
  object: 'definition',
  externalId: 'd-code',
  definition: 'field',
  objectType: 'contact',
  key: 'code',
  label: 'Code',
  valueType: 'TEXT',
  unique: true,
};

eachDialect('chaos', (ctx) => {
  let run: Run;
  before(async () => {
    const t = ctx();
    const worlds: World[] = [];
    for (let i = 0; i < WORKSPACES; i++) {
      const s = await seedWorkspace(t);
      await runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text: JSON.stringify(CODE) });
      worlds.push({ ...s, ids: Object.fromEntries(TYPES.map((k) => [k, []])) as unknown as World['ids'], trashed: [], keyBodies: new Map() });
    }
    const ops = new Map(operationsOf(await loadDocument(t)).map((o) => [o.operationId, o]));
    run = { t, worlds, ops, checker: responseChecker(), answers: [], problems: [], tally: {}, seq: 0 };
    // A few records in each workspace before the run, so that its first steps have links to make.
    for (let ws = 0; ws < WORKSPACES; ws++)
      for (const step of ['createAccount', 'createAccount', 'createContact', 'createContact', 'createContact', 'createList'] as const)
        await runOp(run, { step, ws, a: 0, b: 1, c: 1, flag: false });
  });

  test(`a random plan of ${OPS} mixed operations, ${CONCURRENCY} at a time, keeps every invariant`, async () => {
    const t = ctx();
    const [plan] = fc.sample(planArb(OPS, WORKSPACES), { seed: SEED, numRuns: 1 });
    const started = performance.now();
    await runPlan(run, plan!, CONCURRENCY);
    const ran = Math.round(performance.now() - started);
    // The problems, and the errors the server logged (a 500's cause).
    const failed = (what: string) =>
      `${what} (CHAOS_SEED=${SEED} CHAOS_OPS=${OPS} CHAOS_CONCURRENCY=${CONCURRENCY}):\n${run.problems.slice(0, 12).join('\n')}\n` +
      t
        .logs()
        .split('\n')
        .filter((l) => l.includes('"level":50'))
        .slice(0, 3)
        .map((l) => l.slice(0, 3000))
        .join('\n');
    assert.deepEqual(run.problems, [], failed('answers'));

    for (let ws = 0; ws < WORKSPACES; ws++) {
      const w = run.worlds[ws]!;
      await checkWorkspace(run, w, `workspace ${ws} after the run`);
      const db = t.deps.db.kysely;
      const known = Object.values(w.ids).flat();
      const left = new Set([
        ...(await db.selectFrom('records').select('id').where('workspace_id', '=', w.workspaceId).execute()).map((r) => r.id),
        ...(await db.selectFrom('lists').select('id').where('workspace_id', '=', w.workspaceId).execute()).map((r) => r.id),
        ...(await db.selectFrom('trash').select('id').where('workspace_id', '=', w.workspaceId).execute()).map((r) => r.id),
      ]);
      const purged = new Set(known.filter((id) => !left.has(id)));
      await checkEvents(run, ws, purged);
      await checkHistory(run, ws);
      await checkIdempotency(run, ws, purged);
    }
    assert.deepEqual(run.problems, [], failed('invariants after the run'));

    let restored = 0;
    for (let ws = 0; ws < WORKSPACES; ws++) {
      restored += await restoreAll(run, run.worlds[ws]!);
      await checkWorkspace(run, run.worlds[ws]!, `workspace ${ws} after restoring its trash`);
    }
    assert.deepEqual(run.problems, [], failed('invariants after restoring the trash'));
    assert.ok(!t.logs().includes('unhandled error'), 'an unhandled error was logged');

    const statuses: Record<string, number> = {};
    for (const a of run.answers) {
      const what = `${a.step} ${a.status}${a.json?.error ? ` ${a.json.error.code}` : a.replayed ? ' replayed' : ''}`;
      statuses[what] = (statuses[what] ?? 0) + 1;
    }
    console.log(
      `# chaos [${t.dialect}] seed ${SEED}: ${OPS} operations, ${run.answers.length} API answers in ${ran} ms; ${restored} entries restored at the end`,
    );
    console.log(`# chaos [${t.dialect}] answers: ${JSON.stringify(statuses)}`);
    console.log(`# chaos [${t.dialect}] operator: ${JSON.stringify(run.tally)}`);
    // The plan reached what it is meant to: merges, restores and collisions that succeeded.
    for (const what of ['merge 200', 'delete 200', 'createContact 409 duplicate_value', 'idempotentCreate 200 replayed'])
      assert.ok((statuses[what] ?? 0) > 0, `the plan made no ${what}`);
    assert.ok((run.tally['restore done'] ?? 0) > 0, 'the plan restored nothing');
  });
});
