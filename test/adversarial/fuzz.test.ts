// Schema fuzzing of every operation in the OpenAPI document (issue 7, part 1): valid requests and
// mutated ones (missing fields, wrong types, out-of-range numbers, extra properties, 10 KB
// strings, NUL bytes, lone surrogates, deep nesting, broken JSON, wrong content types, bad query,
// path and Idempotency-Key values). Pass: no 5xx, every response as documented, every request
// that breaks the schemas refused with a 4xx. FUZZ_RUNS sets the cases per operation (default
// 200; 2000 for a full run), FUZZ_SEED the seed (printed with every figure and failure).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { eachDialect, type TestApp } from '../helpers/app.ts';
import { type Canary, seedCanary } from '../helpers/canary.ts';
import { loadDocument, type Operation, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';
import { type FuzzRequest, mutate, mutationArbFor, validRequestArb } from '../helpers/schema-arbitrary.ts';
import { classifier, judge, send, urlOf } from './fuzz-driver.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const PG_RUNS = Number(process.env.FUZZ_RUNS_PG ?? RUNS);
const SEED = Number(process.env.FUZZ_SEED ?? 20260301);

interface Tally {
  cases: number;
  valid: number;
  mutated: Record<string, number>;
  statuses: Record<number, number>;
  failures: number;
}

async function fuzzOperation(t: TestApp, canary: Canary, op: Operation, runs: number): Promise<Tally> {
  const checker = responseChecker();
  const classify = classifier();
  const tally: Tally = { cases: 0, valid: 0, mutated: {}, statuses: {}, failures: 0 };
  const ids = Object.values(canary.ids);
  const valid = validRequestArb(op, ids);
  const caseArb = fc.oneof(
    { weight: 1, arbitrary: valid.map((req) => ({ req, label: 'valid' })) },
    { weight: 3, arbitrary: fc.tuple(valid, mutationArbFor(op)).map(([req, m]) => mutate(op, req, m)) },
  );
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ req, label }: { req: FuzzRequest; label: string }) => {
      const url = urlOf(op, req);
      const invalid = label !== 'valid' && classify.invalid(op, req, url);
      const res = await send(t, canary.secret, op, req, url);
      const v = judge(op, checker, res, invalid);
      tally.cases++;
      if (label === 'valid') tally.valid++;
      else tally.mutated[label] = (tally.mutated[label] ?? 0) + 1;
      tally.statuses[v.status] = (tally.statuses[v.status] ?? 0) + 1;
      if (v.problem) {
        tally.failures++;
        throw new Error(`${op.operationId} [${label}] ${op.method} ${url.slice(0, 300)}: ${v.problem}`);
      }
    }),
    { numRuns: runs, seed: SEED, endOnFailure: true },
  );
  return tally;
}

eachDialect('fuzz', (ctx) => {
  let ops: Operation[] = [];
  let canary: Canary;
  before(async () => {
    const t = ctx();
    ops = operationsOf(await loadDocument(t));
    canary = await seedCanary(t, 'F', new Set(ops.map((o) => o.operationId)));
  });

  test('every documented operation survives schema fuzzing', async (tc) => {
    const t = ctx();
    const runs = t.dialect === 'postgres' ? PG_RUNS : RUNS;
    assert.ok(ops.length >= 3, 'the document lists the operations');
    let total = 0;
    for (const op of ops) {
      await tc.test(op.operationId, async () => {
        const started = performance.now();
        const tally = await fuzzOperation(t, canary, op, runs);
        total += tally.cases;
        const mutated = Object.entries(tally.mutated)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ');
        const statuses = Object.entries(tally.statuses)
          .map(([s, n]) => `${s}×${n}`)
          .join(' ');
        console.log(
          `# fuzz [${t.dialect}] ${op.operationId}: ${tally.cases} cases (${tally.valid} valid; mutated: ${mutated}); statuses ${statuses}; ` +
            `failures ${tally.failures}; seed ${SEED}; ${Math.round(performance.now() - started)} ms`,
        );
        assert.equal(tally.failures, 0);
        assert.equal(tally.cases, runs);
      });
    }
    console.log(`# fuzz [${t.dialect}] total: ${total} cases over ${ops.length} operations, failures 0, seed ${SEED}`);
  });

  test('the whole fuzz run logged no key secret and no unhandled error', () => {
    const t = ctx();
    const logs = t.logs();
    const secretPart = canary.secret.split('_').slice(2).join('_');
    assert.ok(secretPart.length >= 20);
    assert.ok(!logs.includes(secretPart), 'a key secret reached the logs');
    assert.ok(!logs.includes('unhandled error'), 'an unhandled error was logged');
    console.log(`# fuzz [${t.dialect}] logs: ${logs.split('\n').length} lines searched, key secret found 0 times`);
  });
});
