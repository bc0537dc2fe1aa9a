// Scope matrix (issue 7, part 3), driven by SCOPE_TABLE: every served operation has a row equal to
// its documented x-scopes; a key missing exactly one required scope (holding every other public
// scope) gets 403 insufficient_scope and changes nothing; a key with exactly the required scopes
// gets through. A read whose scope depends on the object read (a merge; an enrichment run, to a key
// that can read no run) answers a key that cannot read it exactly as it answers an id that names
// nothing, so the answer never tells what exists.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { PUBLIC_SCOPES, type Scope } from '../../src/auth/scopes.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createUser } from '../../src/users/service.ts';
import { call, eachDialect, keyFor } from '../helpers/app.ts';
import { type Canary, seedCanary, tableCounts } from '../helpers/canary.ts';
import { loadDocument, type Operation, operationsOf } from '../helpers/openapi-ops.ts';
import { CONTENT_BYTES, contentRequests, happyRequest, OBJECT_SCOPES, ownerView, SCOPE_TABLE, sendHappy } from './operations.ts';

eachDialect('scope matrix', (ctx) => {
  let ops: Operation[] = [];
  let canary: Canary;
  before(async () => {
    const t = ctx();
    ops = operationsOf(await loadDocument(t));
    canary = await seedCanary(t, 'S', new Set(ops.map((o) => o.operationId)));
  });

  test('every served operation has a row in the scope table, equal to its documented scopes', () => {
    const missing = ops.filter((op) => !(op.operationId in SCOPE_TABLE)).map((op) => `${op.method} ${op.path} (${op.operationId})`);
    assert.deepEqual(missing, [], `routes without a row in SCOPE_TABLE (test/adversarial/operations.ts): ${missing.join(', ')}`);
    for (const op of ops) assert.deepEqual([...op.scopes].sort(), [...SCOPE_TABLE[op.operationId]!].sort(), `${op.operationId}: x-scopes differ from the spec`);
    for (const op of ops)
      if (op.operationId !== 'validateCredential') assert.ok(op.scopes.length >= 1 || op.operationId in OBJECT_SCOPES, `${op.operationId} requires no scope`);
    const unserved = Object.keys(SCOPE_TABLE).filter((id) => !ops.some((o) => o.operationId === id));
    // A resource arrives with its branch, all its operations at once: a row may wait only while no
    // operation of its resource (scope family) is served.
    const family = (id: string) => (SCOPE_TABLE[id]?.[0] ?? 'none').split(':')[0];
    const partial = unserved.filter((id) => ops.some((o) => family(o.operationId) === family(id)));
    assert.deepEqual(partial, [], `rows of the spec with no served operation: ${partial.join(', ')}`);
    if (unserved.length > 0) console.log(`# scope table: rows not served by this build: ${unserved.join(', ')}`);
    console.log(`# scope table: ${ops.length} served operations, each with its row; ${unserved.length} rows not served`);
  });

  test("bytes whose every parent a key reads at METADATA are refused to it whatever its scopes; the owner's exact scopes get them", async () => {
    // docs/files.md §Who downloads the bytes: scopes open the operation, the parents' access the
    // bytes: a private meeting's transcript, a restricted channel's message file. Before the
    // matrix below, whose writes make the canary's meeting FULL and link its transcript to new
    // meetings.
    const t = ctx();
    const addresses = ops.filter((op) => op.method === 'GET' && /\/url$/.test(op.path)).map((op) => op.operationId);
    assert.deepEqual(
      addresses.filter((id) => !(id in CONTENT_BYTES)),
      [],
      'an operation answering a download address has no row in CONTENT_BYTES',
    );
    const other = await createUser(operatorCtx(t.deps.db.kysely, canary.workspaceId), {
      email: `other-${canary.tag.toLowerCase()}@canary.test`,
      role: 'admin',
    });
    const refusedTo = { workspace: await keyFor(t, canary.workspaceId, null, [...PUBLIC_SCOPES]), admin: await keyFor(t, canary.workspaceId, other.id, null) };
    // The refusal never names the parent that holds the bytes back.
    const parents = [canary.ids.meeting, canary.ids.restrictedMessage, canary.ids.restrictedChannel].filter((id): id is string => !!id);
    let checked = 0;
    for (const op of ops.filter((o) => o.operationId in CONTENT_BYTES)) {
      for (const { kind, req } of contentRequests(op, canary)) {
        const own = await sendHappy(t, await keyFor(t, canary.workspaceId, canary.userId, [...(SCOPE_TABLE[op.operationId] ?? [])]), req);
        assert.equal(own.statusCode, 200, `${op.operationId} ${kind}: the owner with exactly its scopes: ${own.body}`);
        assert.ok(typeof own.json().url === 'string', `${op.operationId} ${kind}: no address for the owner`);
        for (const [who, secret] of Object.entries(refusedTo)) {
          const counts = await tableCounts(t);
          const res = await sendHappy(t, secret, req);
          assert.equal(res.statusCode, 403, `${op.operationId} ${kind} for a ${who} key: ${res.body}`);
          assert.equal(res.json().error.code, 'full_access_required', `${op.operationId} ${kind} for a ${who} key`);
          for (const id of parents) assert.ok(!res.body.includes(id), `${op.operationId} ${kind}: the refusal names a parent`);
          assert.deepEqual(await tableCounts(t), counts, `${op.operationId} ${kind} for a ${who} key: rows changed`);
          checked++;
        }
      }
    }
    assert.ok(checked > 0 || !ops.some((o) => o.operationId in CONTENT_BYTES));
    console.log(`# scope matrix [${t.dialect}]: ${checked} downloads of METADATA-only bytes refused with full_access_required`);
  });
  test('a key missing exactly one required scope gets 403 and changes nothing; exactly the required scopes get through', async () => {
    const t = ctx();
    let refused = 0;
    let allowed = 0;
    // Reads first, so that the writes' successes do not change what a later refusal is compared with.
    const ordered = [...ops].sort((a, b) => Number(a.method !== 'GET') - Number(b.method !== 'GET'));
    for (const op of ordered) {
      const required = OBJECT_SCOPES[op.operationId] ?? SCOPE_TABLE[op.operationId] ?? [];
      const req = happyRequest(op, canary);
      const extra: Record<string, string> = op.idempotent ? { 'idempotency-key': `scope-${op.operationId}` } : {};
      for (const missing of required) {
        const scopes: Scope[] = PUBLIC_SCOPES.filter((s) => s !== missing);
        const secret = await keyFor(t, canary.workspaceId, canary.userId, scopes);
        const counts = await tableCounts(t);
        const view = await ownerView(t, ops, canary);
        const res = await sendHappy(t, secret, req, extra);
        assert.equal(res.statusCode, 403, `${op.operationId} without ${missing}: ${res.body}`);
        assert.equal(res.json().error.code, 'insufficient_scope');
        assert.match(res.json().error.message, new RegExp(missing));
        assert.deepEqual(await tableCounts(t), counts, `${op.operationId} without ${missing}: rows changed`);
        assert.deepEqual(await ownerView(t, ops, canary), view, `${op.operationId} without ${missing}: data changed`);
        refused++;
      }
      const exact = await keyFor(t, canary.workspaceId, canary.userId, [...required]);
      const res = await sendHappy(t, exact, req, extra);
      assert.ok(
        res.statusCode >= 200 && res.statusCode < 300,
        `${op.operationId} with exactly ${required.join(', ') || 'no scopes'}: ${res.statusCode} ${res.body}`,
      );
      allowed++;
    }
    console.log(
      `# scope matrix [${t.dialect}]: ${ops.length} operations, ${refused} missing-one-scope calls refused with 403 and no change, ${allowed} exact-scope calls allowed; failures 0`,
    );
  });
  test('a merge a key cannot read is answered as a missing one', async () => {
    const t = ctx();
    if (!canary.ids.merge) return;
    const missing = `mrg_${'0'.repeat(26)}`;
    const answers = async (scopes: Scope[]) => {
      const secret = await keyFor(t, canary.workspaceId, canary.userId, scopes);
      const out = [];
      for (const id of [canary.ids.merge!, missing]) {
        const res = await call(t, secret, 'GET', `/v1/merges/${id}`);
        const { code, message } = res.json().error ?? {};
        out.push({ status: res.statusCode, code, message: String(message).replace(id, 'ID') });
      }
      return out;
    };
    // The canary's merge merged two accounts: every scope but accounts:read, then no read scope of
    // a mergeable type at all.
    for (const scopes of [
      PUBLIC_SCOPES.filter((s) => s !== 'accounts:read'),
      PUBLIC_SCOPES.filter((s) => !['accounts:read', 'contacts:read', 'opportunities:read', 'custom_objects:read'].includes(s)),
    ]) {
      const [existing, absent] = await answers(scopes);
      assert.equal(existing!.status, 403, `an account merge without accounts:read: ${JSON.stringify(existing)}`);
      assert.deepEqual(absent, existing, 'a missing merge must be answered as one the key cannot read');
      assert.match(existing!.message, /accounts:read/);
    }
    // With the read scope of every type a merge can be of: the merge, and 404 for the missing id.
    const [found, none] = await answers(['accounts:read', 'contacts:read', 'opportunities:read', 'custom_objects:read']);
    assert.equal(found!.status, 200);
    assert.deepEqual([none!.status, none!.code], [404, 'resource_not_found']);
  });
  test('an enrichment run is answered alike for every id to a key that can read no run', async () => {
    // docs/enrichment.md §Operations: a key without accounts:read and contacts:read is refused
    // before the run is looked up.
    const t = ctx();
    if (!canary.ids.enrichmentRun) return;
    const answers = async (scopes: Scope[]) => {
      const secret = await keyFor(t, canary.workspaceId, canary.userId, scopes);
      const out = [];
      for (const id of [canary.ids.enrichmentRun!, `enr_${'0'.repeat(26)}`]) {
        const res = await call(t, secret, 'GET', `/v1/enrichmentRun/${id}`);
        const { code, message } = res.json().error ?? {};
        out.push({ status: res.statusCode, code, message });
      }
      return out;
    };
    const [existing, absent] = await answers(PUBLIC_SCOPES.filter((s) => !['accounts:read', 'contacts:read'].includes(s)));
    assert.deepEqual([existing!.status, existing!.code], [403, 'insufficient_scope']);
    assert.deepEqual(absent, existing, 'a missing run must be answered as one the key cannot read');
    // With the read scope of another type than the run's: the run and the missing id alike.
    const [other, none] = await answers(['contacts:read']);
    assert.deepEqual([other!.status, other!.code], [403, 'insufficient_scope']);
    assert.deepEqual(none, other);
    // With both read scopes: the run, and 404 for the missing id.
    const [found, absentToo] = await answers(['accounts:read', 'contacts:read']);
    assert.deepEqual([found!.status, absentToo!.status], [200, 404]);
  });
});
