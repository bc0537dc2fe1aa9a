// Tenant matrix (issue 7, part 2): workspace B's key, every operation × every id parameter, with
// workspace A's ids (path and body), must get exactly the answer a random id gets, leak no byte
// of A's canary data, and change no row. B's own requests never show A's data; A's idempotency
// keys mean nothing in B; A's capability tokens do not open other doors.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { type Canary, leaked, seedCanary, tableCounts } from '../helpers/canary.ts';
import { loadDocument, type Operation, operationsOf } from '../helpers/openapi-ops.ts';
import { happyRequest, idKinds, NOT_IDS, ownerView, randomId, sendHappy } from './operations.ts';

/** The response with the id asked for, request ids and per-request headers taken out. */
function normal(res: { statusCode: number; body: string; headers: Record<string, unknown> }, id: string) {
  const body = res.body
    .split(id)
    .join('<ID>')
    .replace(/req_[0-9a-z]{26}/g, '<REQ>');
  const headers = Object.keys(res.headers)
    .filter((h) => !['x-request-id', 'date', 'content-length', 'x-ratelimit-reset'].includes(h))
    .sort();
  return { status: res.statusCode, body, headers };
}

function replaceDeep(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value === from ? to : value;
  if (Array.isArray(value)) return value.map((v) => replaceDeep(v, from, to));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceDeep(v, from, to)]));
  return value;
}

function assertNoLeak(where: string, res: { body: string; headers: Record<string, unknown> }, a: Canary, asked: string[] = []) {
  const text = `${res.body}\n${JSON.stringify(res.headers)}`;
  const found = leaked(
    text,
    a.secrets().filter((s) => !asked.includes(s)),
  );
  assert.deepEqual(found, [], `${where}: workspace A's data in B's response: ${found.join(', ')}`);
}

async function foreignVsRandom(t: TestApp, where: string, b: Canary, send: (id: string) => Promise<any>, foreign: string, random: string, a: Canary) {
  const f = await send(foreign);
  const r = await send(random);
  assert.deepEqual(normal(f, foreign), normal(r, random), `${where}: A's id is answered differently from a random id`);
  assertNoLeak(where, f, a, [foreign]);
  return f.statusCode as number;
}

eachDialect('tenant matrix', (ctx) => {
  let ops: Operation[] = [];
  let a: Canary;
  let b: Canary;
  before(async () => {
    const t = ctx();
    ops = operationsOf(await loadDocument(t));
    const served = new Set(ops.map((o) => o.operationId));
    a = await seedCanary(t, 'A', served);
    b = await seedCanary(t, 'B', served);
  });

  test("B with A's ids, in paths and in bodies, gets what a random id gets, sees nothing of A and changes nothing", async () => {
    const t = ctx();
    const counts = await tableCounts(t);
    const viewA = await ownerView(t, ops, a);
    let pathCases = 0;
    let bodyCases = 0;
    const statuses: Record<number, number> = {};
    for (const op of ops) {
      for (const [param, kind] of Object.entries(idKinds(op))) {
        if (NOT_IDS.has(kind)) continue;
        const foreign = a.ids[kind];
        assert.ok(foreign, `${op.operationId}: workspace A has no ${kind} to try`);
        const send = (id: string) => sendHappy(t, b.secret, happyRequest(op, b, { [param]: id }));
        const status = await foreignVsRandom(t, `${op.operationId} {${param}}`, b, send, foreign, randomId(kind), a);
        assert.equal(status, 404, `${op.operationId} {${param}} with A's ${kind}`);
        statuses[status] = (statuses[status] ?? 0) + 1;
        pathCases++;
      }
      const req = happyRequest(op, b);
      if (req.body === undefined) continue;
      // Every id of B's inside the body, swapped for A's id of the same kind.
      for (const [kind, ownId] of Object.entries(b.ids)) {
        if (!JSON.stringify(req.body).includes(ownId) || !a.ids[kind]) continue;
        const send = (id: string) => call(t, b.secret, req.method, req.url, replaceDeep(req.body, ownId, id));
        const status = await foreignVsRandom(t, `${op.operationId} body ${kind}`, b, send, a.ids[kind], randomId(kind), a);
        assert.ok(status >= 400 && status < 500, `${op.operationId} body with A's ${kind}: ${status}`);
        statuses[status] = (statuses[status] ?? 0) + 1;
        bodyCases++;
      }
    }
    assert.deepEqual(await tableCounts(t), counts, 'rows changed');
    assert.deepEqual(await ownerView(t, ops, a), viewA, "A's data changed");
    assert.ok(pathCases >= 4);
    console.log(
      `# tenant matrix [${t.dialect}]: ${pathCases} operation × path-id cases and ${bodyCases} body-id cases with the other workspace's ids; ` +
        `statuses ${JSON.stringify(statuses)}; identical to a random id: ${pathCases + bodyCases}; bytes of A leaked 0; rows changed 0; failures 0`,
    );
  });

  test("B's own requests to every operation show nothing of A", async () => {
    const t = ctx();
    const viewA = await ownerView(t, ops, a);
    for (const op of ops) {
      const res = await sendHappy(t, b.secret, happyRequest(op, b));
      assert.ok(res.statusCode < 300, `${op.operationId}: ${res.statusCode} ${res.body}`);
      assertNoLeak(op.operationId, res, a);
    }
    assert.deepEqual(await ownerView(t, ops, a), viewA, "B's writes changed A's data");
    console.log(`# tenant [${t.dialect}]: ${ops.length} operations called by B on its own data; bytes of A in the answers 0`);
  });

  test("A's idempotency key means nothing in B: B's request with it is B's own, never A's replay", async () => {
    const t = ctx();
    assert.ok(a.idempotency, 'workspace A used an Idempotency-Key');
    const { key, url, body } = a.idempotency;
    // A's exact request in B: judged afresh (A's contact is no contact of B's), not replayed.
    const same = await call(t, b.secret, 'POST', url, body, { 'idempotency-key': key });
    assert.equal(same.headers['idempotent-replayed'], undefined, "B got A's stored response");
    assert.equal(same.json().error?.code, 'relationship_entity_missing', same.body);
    assert.ok(!same.body.includes(a.ids.list!), "A's list id in B's answer");
    // B's own request under another key A has used: created in B, no key_reused conflict.
    const key2 = `second-${a.tag}`;
    const mine = await call(t, a.secret, 'POST', url, { fields: { $name: `A2 ${a.tag}`, $objectType: 'account' } }, { 'idempotency-key': key2 });
    assert.equal(mine.statusCode, 200);
    const own = await call(t, b.secret, 'POST', url, { fields: { $name: `B ${b.tag}`, $objectType: 'contact' } }, { 'idempotency-key': key2 });
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(own.headers['idempotent-replayed'], undefined);
    assert.notEqual(own.json().id, mine.json().id);
    assertNoLeak('idempotency key reuse', own, a);
    const again = await call(t, a.secret, 'POST', url, body, { 'idempotency-key': key });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, a.ids.list);
    console.log(`# tenant [${t.dialect}]: A's Idempotency-Key replayed in B 0 times, still replayed in A`);
  });

  test("A's capability tokens, tampered or used at the other byte endpoint, open nothing", async (tc) => {
    const t = ctx();
    if (!a.downloadPath || !a.uploadPath) {
      tc.diagnostic('no byte endpoints in this build');
      assert.ok(!ops.some((o) => o.operationId === 'createFile'));
      return;
    }
    const dl = a.downloadPath.split('/').pop()!;
    const up = a.uploadPath.split('/').pop()!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    let cases = 0;
    for (const i of [0, Math.floor(dl.length / 2), dl.length - 1]) {
      const res = await t.app.inject({ method: 'GET', url: `/downloads/${flip(dl, i)}` });
      assert.ok(res.statusCode === 403 || res.statusCode === 404, `tampered download token: ${res.statusCode}`);
      assertNoLeak('tampered download', res, a);
      cases++;
    }
    const cross = await t.app.inject({ method: 'GET', url: `/downloads/${up}` });
    assert.ok(cross.statusCode >= 400 && cross.statusCode < 500, `upload token at /downloads: ${cross.statusCode}`);
    assertNoLeak('upload token as download', cross, a);
    const put = await t.app.inject({ method: 'PUT', url: `/uploads/${dl}`, headers: { 'content-type': 'text/plain' }, payload: 'overwrite' });
    assert.ok(put.statusCode >= 400 && put.statusCode < 500, `download token at /uploads: ${put.statusCode}`);
    const real = await t.app.inject({ method: 'GET', url: a.downloadPath });
    assert.equal(real.body, `file bytes ${a.tag}`, "A's bytes are intact");
    cases += 2;
    console.log(`# tenant [${t.dialect}]: ${cases} tampered or crossed capability tokens refused; bytes leaked 0`);
  });
});
