// Mass assignment (issue 7, part 4): id, createdAt, workspaceId, accessLevel, status and scopes,
// injected at every level of every write's body, are refused or ignored, and never stored.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { type Canary, seedCanary, tableNames } from '../helpers/canary.ts';
import { loadDocument, type Operation, operationsOf } from '../helpers/openapi-ops.ts';
import { BODIES, happyRequest } from './operations.ts';

/**
 * Every row of every table, as text, rows sorted (PostgreSQL returns an updated row elsewhere).
 * A key's last_used_at is left out: every request, refused or not, may refresh it once a minute.
 */
async function dump(t: TestApp): Promise<string> {
  const db = t.deps.db.kysely;
  const tables = await tableNames(t);
  const parts: string[] = [];
  // Rows sorted: PostgreSQL returns them in physical order, which an UPDATE elsewhere in the table changes.
  for (const name of tables) {
    const rows: Array<Record<string, unknown>> = await (db as any).selectFrom(name).selectAll().execute();
    // A key's last_used_at is bookkeeping the authenticator writes at most once a minute, off the
    // request path: a run longer than a minute sees it move whatever the write did.
    const kept = name === 'api_keys' ? rows.map(({ last_used_at: _u, ...r }) => r) : rows;
    parts.push(
      `[${kept
        .map((r) => JSON.stringify(r))
        .sort()
        .join(',')}]`,
    );
  }
  return parts.join('\n');
}

const count = (text: string, s: string) => text.split(s).length - 1;

function objectPaths(value: unknown, path: string[] = []): string[][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return [path, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, [...path, k]))];
}

function inject(body: unknown, path: string[], field: string, value: unknown): unknown {
  const copy = structuredClone(body) as Record<string, any>;
  let at = copy;
  for (const k of path) at = at[k];
  at[field] = value;
  return copy;
}

eachDialect('mass assignment', (ctx) => {
  let ops: Operation[] = [];
  let a: Canary;
  let b: Canary;
  before(async () => {
    const t = ctx();
    ops = operationsOf(await loadDocument(t));
    const served = new Set(ops.map((o) => o.operationId));
    a = await seedCanary(t, 'M', served);
    b = await seedCanary(t, 'N', served);
  });

  test('system fields injected into every write are refused or ignored, never stored', async () => {
    const t = ctx();
    const writes = ops.filter((op) => op.method !== 'GET' && op.body);
    assert.ok(writes.length >= 2, 'writes with bodies are served');
    for (const op of writes) assert.ok(op.operationId in BODIES, `${op.operationId} has no row in BODIES`);
    const values: Record<string, unknown> = {
      id: 'lst_injectedinjectedinjected0',
      createdAt: '1999-09-09T09:09:09.999Z',
      workspaceId: b.workspaceId,
      accessLevel: 'INJECTED_LEVEL',
      status: 'COMPLETED',
      scopes: ['injected:scope'],
    };
    let refused = 0;
    let ignored = 0;
    // Nothing writes between one call's `after` and the next call: it is the next one's `before`.
    let last = await dump(t);
    for (const op of writes) {
      const req = happyRequest(op, a);
      for (const path of objectPaths(req.body ?? {})) {
        for (const [field, value] of Object.entries(values)) {
          const before = last;
          const res = await call(t, a.secret, req.method, req.url, inject(req.body ?? {}, path, field, value));
          const after = (last = await dump(t));
          const where = `${op.operationId} ${[...path, field].join('.')}`;
          assert.ok(res.statusCode < 500, `${where}: ${res.statusCode} ${res.body}`);
          if (res.statusCode >= 400) {
            refused++;
            assert.equal(after, before, `${where}: refused, yet rows changed`);
          } else {
            ignored++;
            assert.ok(!res.body.includes('injected') && !res.body.includes('1999-09-09'), `${where}: injected value in the answer ${res.body}`);
          }
          assert.ok(!after.toLowerCase().includes('injected') && !after.includes('1999-09-09'), `${where}: injected value stored`);
          assert.equal(count(after, b.workspaceId), count(before, b.workspaceId), `${where}: a row moved into workspace B`);
          assert.equal(count(after, '"COMPLETED"'), count(before, '"COMPLETED"'), `${where}: a status was set`);
        }
      }
    }
    console.log(
      `# mass assignment [${t.dialect}]: ${refused + ignored} injected writes over ${writes.length} operations; refused ${refused}, accepted with the field ignored ${ignored}, stored 0; failures 0`,
    );
  });
});
