// Wire conformance with the hosted original (docs/conformance.md): runs the workload of
// conformance-workload.ts against a Rolodex server on each database and validates every response
// body against the original's OpenAPI document, cut to the operations served, errors wrapped.
//
//   node scripts/conformance.ts /tmp/original-openapi.json [--dialect sqlite|postgres] [--json]
//
// Exits 1 when any response violates the original's schema for its operation and status, or has a
// status the original does not list.
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import type { DialectName } from '../src/db/types.ts';
import { buildTestApp } from '../test/helpers/app.ts';
import { type CutOperation, cutOriginal, operationFor, readOriginal } from './conformance-schema.ts';
import { runWorkload, type Sent } from './conformance-workload.ts';

interface Violation {
  dialect: DialectName;
  operation: string;
  status: number;
  /** What is wrong, without the values, so that one defect is listed once. */
  problem: string;
  example: string;
}

/**
 * Statuses Rolodex answers on purpose where the original lists none, with the rule that decides
 * them. Their bodies are still checked, against the original's error object for 400.
 */
export const DELIBERATE_STATUSES: Readonly<Record<number, string>> = {
  413: 'a JSON body over 1 MiB is refused with 413 (docs/design.md §Requests); the original documents no 413',
};

function problems(op: CutOperation, r: Sent): string[] {
  if (!op.responses.has(r.status)) {
    if (!DELIBERATE_STATUSES[r.status]) return [`status ${r.status} is not a response of ${op.theirId}`];
    const asBadRequest = op.responses.get(400);
    if (asBadRequest && !asBadRequest({ error: { ...(r.body as { error: object }).error, type: 'bad_request' } }))
      return ["the error body is not the original's error object"];
    return [];
  }
  const validate = op.responses.get(r.status);
  if (!validate || validate(r.body)) return [];
  return (validate.errors ?? []).map((e) => {
    const where = e.instancePath.replace(/\/(con|acc|opp|nte|tsk|rec|usr|fil|lst|mtg|eml)_[0-9a-z]+/g, '/<id>') || '(body)';
    return `${where}: ${e.message ?? e.keyword}${e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''}${e.keyword === 'enum' ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`;
  });
}

async function runOn(
  dialect: DialectName,
  original: Record<string, unknown>,
): Promise<{
  checked: number;
  deliberate: number;
  byOperation: Map<string, number>;
  violations: Violation[];
  unmatched: string[];
  cut: ReturnType<typeof cutOriginal>;
}> {
  const t = await buildTestApp(dialect);
  try {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const ours = (await (await fetch(`${base}/openapi.json`)).json()) as Record<string, unknown>;
    const cut = cutOriginal(original, ours);
    const env = { DATA_DIR: t.tdb.dataDir, PUBLIC_BASE_URL: base, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
    const violations: Violation[] = [];
    const byOperation = new Map<string, number>();
    const unmatched: string[] = [];
    let checked = 0;
    let deliberate = 0;
    await runWorkload(base, env, (r) => {
      const op = operationFor(cut.operations, r.method, r.url, cut.ourOnly);
      if (!op) {
        unmatched.push(`${r.method} ${r.url.split('?')[0]}`);
        return;
      }
      checked++;
      if (!op.responses.has(r.status) && DELIBERATE_STATUSES[r.status]) deliberate++;
      byOperation.set(`${op.key} ${r.status}`, (byOperation.get(`${op.key} ${r.status}`) ?? 0) + 1);
      for (const problem of problems(op, r))
        violations.push({ dialect, operation: op.key, status: r.status, problem, example: `${r.method} ${r.url} → ${JSON.stringify(r.body).slice(0, 300)}` });
    });
    return { checked, deliberate, byOperation, violations, unmatched, cut };
  } finally {
    await t.close();
  }
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { dialect: { type: 'string', multiple: true }, json: { type: 'boolean' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node scripts/conformance.ts <original-openapi.json> [--dialect sqlite|postgres]… [--json]\n');
  process.exit(2);
}
const original = readOriginal(positionals[0] as string);
const dialects = (values.dialect ?? ['sqlite', 'postgres']) as DialectName[];
const report = [];
for (const dialect of dialects) report.push({ dialect, ...(await runOn(dialect, original)) });

const distinct = new Map<string, Violation & { count: number; dialects: Set<DialectName> }>();
for (const v of report.flatMap((r) => r.violations)) {
  const key = `${v.operation} ${v.status} ${v.problem}`;
  const seen = distinct.get(key) ?? { ...v, count: 0, dialects: new Set<DialectName>() };
  seen.count++;
  seen.dialects.add(v.dialect);
  distinct.set(key, seen);
}
const cut = report[0]?.cut;
if (values.json) {
  process.stdout.write(
    `${JSON.stringify(
      {
        operations: cut?.operations.length,
        onlyOurs: cut?.onlyOurs,
        onlyTheirs: cut?.onlyTheirs,
        runs: report.map((r) => ({
          dialect: r.dialect,
          checked: r.checked,
          deliberate: r.deliberate,
          violations: r.violations.length,
          unmatched: [...new Set(r.unmatched)],
          responses: Object.fromEntries(r.byOperation),
        })),
        violations: [...distinct.values()].map((v) => ({ ...v, dialects: [...v.dialects] })),
      },
      null,
      2,
    )}\n`,
  );
} else {
  const out: string[] = [];
  out.push(`operations checked: ${cut?.operations.length} served by both`);
  out.push(`served by Rolodex only (not checked): ${cut?.onlyOurs.join(', ') || 'none'}`);
  out.push(`in the original only: ${cut?.onlyTheirs.join(', ') || 'none'}`);
  for (const [status, why] of Object.entries(DELIBERATE_STATUSES)) out.push(`deliberately different: ${status}: ${why}`);
  for (const r of report) {
    const ops = new Set([...r.byOperation.keys()].map((k) => k.split(' ').slice(0, 2).join(' ')));
    out.push(
      `${r.dialect}: ${r.checked} responses of ${ops.size} operations checked (${r.deliberate} with a deliberately different status), ${r.violations.length} violations`,
    );
    const missing = cut?.operations.filter((o) => !ops.has(o.key)).map((o) => o.key) ?? [];
    if (missing.length) out.push(`  operations the workload did not reach: ${missing.join(', ')}`);
  }
  for (const v of distinct.values())
    out.push(`VIOLATION ${v.operation} ${v.status} [${[...v.dialects].join(',')}] ×${v.count}: ${v.problem}\n    e.g. ${v.example}`);
  process.stdout.write(`${out.join('\n')}\n`);
}
process.exit(distinct.size > 0 ? 1 : 0);
