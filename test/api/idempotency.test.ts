// The shared idempotency layer (docs/design.md §Idempotency), through a test route that creates a
// user: replay, reuse with another body, key validation, what is and is not stored, and
// concurrency.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { call, eachDialect, keyFor, seedWorkspace, VERSION } from '../helpers/app.ts';
import { dispatchInMemory } from '../../src/mcp/dispatch.ts';
import { pipelineRoutes } from '../helpers/pipeline-routes.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createUser } from '../../src/users/service.ts';

eachDialect(
  'idempotency',
  (ctx) => {
    const countUsers = async (ws: string) =>
      Number(
        (
          await ctx()
            .deps.db.kysely.selectFrom('users')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('workspace_id', '=', ws)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('a repeated key replays status and body exactly, with Idempotent-Replayed', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const first = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'a@x.test' }, { 'idempotency-key': 'k1' });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const again = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'a@x.test' }, { 'idempotency-key': 'k1' });
      assert.equal(again.statusCode, 200);
      assert.equal(again.body, first.body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(await countUsers(s.workspaceId), 2); // the seeded user and one created
    });

    test('equal bodies with keys in another order are the same request', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await call(t, s.secret, 'POST', '/v1/test/users', { email: 'b@x.test', fail: 'no' }, { 'idempotency-key': 'k2' });
      const again = await t.app.inject({
        method: 'POST',
        url: '/v1/test/users',
        headers: { authorization: `Bearer ${s.secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json', 'idempotency-key': 'k2' },
        payload: '{"fail":"no","email":"b@x.test"}',
      });
      assert.equal(again.headers['idempotent-replayed'], 'true');
    });

    test('the same key with another body is 422 idempotency_key_reused and does nothing', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await call(t, s.secret, 'POST', '/v1/test/users', { email: 'c@x.test' }, { 'idempotency-key': 'k3' });
      const res = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'other@x.test' }, { 'idempotency-key': 'k3' });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().error.code, 'idempotency_key_reused');
      assert.equal(res.json().error.param, 'Idempotency-Key');
      assert.equal(await countUsers(s.workspaceId), 2);
    });

    test('keys are per workspace', async () => {
      const t = ctx();
      const a = await seedWorkspace(t);
      const b = await seedWorkspace(t);
      await call(t, a.secret, 'POST', '/v1/test/users', { email: 'd@x.test' }, { 'idempotency-key': 'shared' });
      const res = await call(t, b.secret, 'POST', '/v1/test/users', { email: 'e@x.test' }, { 'idempotency-key': 'shared' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['idempotent-replayed'], undefined);
      assert.equal(await countUsers(b.workspaceId), 2);
    });

    test('a replay answers only the caller it was made for: another user of the workspace gets 422', async () => {
      const t = ctx();
      const a = await seedWorkspace(t);
      const other = await createUser(operatorCtx(t.deps.db.kysely, a.workspaceId), { email: 'other@x.test', role: 'member' });
      const otherKey = await keyFor(t, a.workspaceId, other.id);
      const body = { email: 'f@x.test' };
      const first = await call(t, a.secret, 'POST', '/v1/test/users', body, { 'idempotency-key': 'mine' });
      assert.equal(first.statusCode, 200);
      const stranger = await call(t, otherKey, 'POST', '/v1/test/users', body, { 'idempotency-key': 'mine' });
      assert.equal(stranger.statusCode, 422, stranger.body);
      assert.equal(stranger.json().error.code, 'idempotency_key_reused');
      assert.notEqual(stranger.body, first.body);
      // The same user's other key is the same caller: its retry is replayed.
      const rotated = await call(t, await keyFor(t, a.workspaceId, a.userId), 'POST', '/v1/test/users', body, { 'idempotency-key': 'mine' });
      assert.equal(rotated.headers['idempotent-replayed'], 'true');
      assert.equal(rotated.body, first.body);
      // Workspace keys see alike: one's answer is replayed to another.
      const [w1, w2] = [await keyFor(t, a.workspaceId, null), await keyFor(t, a.workspaceId, null)];
      const made = await call(t, w1, 'POST', '/v1/test/users', { email: 'g@x.test' }, { 'idempotency-key': 'ours' });
      const again = await call(t, w2, 'POST', '/v1/test/users', { email: 'g@x.test' }, { 'idempotency-key': 'ours' });
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, made.body);
      assert.equal(await countUsers(a.workspaceId), 4); // the seeded user, the other, and one created by each caller
    });

    test('invalid keys are refused before anything happens', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const long = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'f@x.test' }, { 'idempotency-key': 'k'.repeat(256) });
      assert.equal(long.json().error.code, 'idempotency_key_too_long');
      const bad = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'f@x.test' }, { 'idempotency-key': 'tab\there' });
      assert.equal(bad.json().error.code, 'invalid_idempotency_key');
      assert.equal(bad.json().error.param, 'Idempotency-Key');
      const ok = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'f@x.test' }, { 'idempotency-key': 'k'.repeat(255) });
      assert.equal(ok.statusCode, 200);
      assert.equal(await countUsers(s.workspaceId), 2);
    });

    test('a key is read as HTTP reads a header: blanks around it are no part of it, whichever way it came', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      // The way MCP's write_to_rolodex sends a request (docs/mcp.md §Tools), which no socket trims.
      const inMemory = (key: string, email: string) =>
        dispatchInMemory(t.app, {
          method: 'POST',
          url: '/v1/test/users',
          headers: {
            host: 'localhost',
            authorization: `Bearer ${s.secret}`,
            'service-version': VERSION,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body: JSON.stringify({ email }),
          remoteAddress: '127.0.0.1',
          encrypted: false,
        });
      const blank = await inMemory(' \t ', 'blank@x.test');
      assert.equal(blank.status, 400, blank.body);
      assert.equal(JSON.parse(blank.body).error.code, 'invalid_idempotency_key');
      const padded = await inMemory(' pad\t', 'pad@x.test');
      assert.equal(padded.status, 200, padded.body);
      const bare = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'pad@x.test' }, { 'idempotency-key': 'pad' });
      assert.equal(bare.headers['idempotent-replayed'], 'true', 'the same key as the padded one');
      assert.equal(bare.body, padded.body);
      assert.equal(await countUsers(s.workspaceId), 2);
    });

    test('only successes are stored: a request failed in the handler (4xx or 5xx) or refused before it runs again with the same key', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const clientErr = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'g@x.test', fail: 'client' }, { 'idempotency-key': 'k4' });
      assert.equal(clientErr.statusCode, 400);
      assert.equal(await countUsers(s.workspaceId), 1, 'the failed handler wrote nothing');
      const again = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'g@x.test', fail: 'client' }, { 'idempotency-key': 'k4' });
      assert.equal(again.statusCode, 400);
      assert.equal(again.headers['idempotent-replayed'], undefined, 'a 4xx is not stored: the handler ran again');
      assert.notEqual(again.json().error.requestId, clientErr.json().error.requestId);
      const keys = await t.deps.db.kysely.selectFrom('idempotency_keys').select('key').where('workspace_id', '=', s.workspaceId).execute();
      assert.deepEqual(keys, [], 'a failure leaves no claim behind');

      const serverErr = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'h@x.test', fail: 'server' }, { 'idempotency-key': 'k5' });
      assert.equal(serverErr.statusCode, 500);
      const retried = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'h@x.test', fail: 'server' }, { 'idempotency-key': 'k5' });
      assert.equal(retried.statusCode, 500);
      assert.equal(retried.headers['idempotent-replayed'], undefined, 'a 5xx is not stored');

      const invalid = await call(t, s.secret, 'POST', '/v1/test/users', { email: 1 }, { 'idempotency-key': 'k6' });
      assert.equal(invalid.statusCode, 400);
      const valid = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'i@x.test' }, { 'idempotency-key': 'k6' });
      assert.equal(valid.statusCode, 200, 'a request refused by validation did not take the key');
    });

    test('a failed request retried with the same key, once its cause is fixed, runs again and succeeds; the success is replayed', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const body = { email: 'p@x.test', fail: 'until-ready' };
      const failed = await call(t, s.secret, 'POST', '/v1/test/users', body, { 'idempotency-key': 'fix' });
      assert.equal(failed.statusCode, 400, failed.body);
      assert.equal(failed.json().error.code, 'invalid_value');
      await createUser(operatorCtx(t.deps.db.kysely, s.workspaceId), { email: 'ready@x.test' });
      const ok = await call(t, s.secret, 'POST', '/v1/test/users', body, { 'idempotency-key': 'fix' });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.headers['idempotent-replayed'], undefined);
      assert.equal(ok.json().email, 'p@x.test');
      const replay = await call(t, s.secret, 'POST', '/v1/test/users', body, { 'idempotency-key': 'fix' });
      assert.equal(replay.statusCode, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, ok.body, 'byte for byte');
      assert.equal(await countUsers(s.workspaceId), 3, 'the seeded user, ready@ and p@: created once');
    });

    test('the same key on two operations names two independent requests', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const user = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'n@x.test' }, { 'idempotency-key': 'both' });
      const other = await call(t, s.secret, 'POST', '/v1/test/users-too', { email: 'o@x.test' }, { 'idempotency-key': 'both' });
      assert.equal(user.statusCode, 200);
      assert.equal(other.statusCode, 200, other.body);
      assert.equal(other.headers['idempotent-replayed'], undefined, 'not a replay of the other operation');
      assert.notEqual(other.json().id, user.json().id);
      assert.equal(await countUsers(s.workspaceId), 3);
      const replayUser = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'n@x.test' }, { 'idempotency-key': 'both' });
      const replayOther = await call(t, s.secret, 'POST', '/v1/test/users-too', { email: 'o@x.test' }, { 'idempotency-key': 'both' });
      assert.equal(replayUser.body, user.body);
      assert.equal(replayOther.body, other.body);
      assert.equal(replayUser.headers['idempotent-replayed'], 'true');
      assert.equal(replayOther.headers['idempotent-replayed'], 'true');
      assert.equal(await countUsers(s.workspaceId), 3);
    });

    test('50 concurrent identical requests create exactly one user', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const results = await Promise.all(
        Array.from({ length: 50 }, () => call(t, s.secret, 'POST', '/v1/test/users', { email: 'j@x.test', fail: 'slow' }, { 'idempotency-key': 'k7' })),
      );
      const statuses = results.map((r) => r.statusCode);
      assert.ok(
        statuses.every((c) => c === 200 || c === 409),
        `unexpected statuses ${statuses.join(', ')}`,
      );
      for (const r of results.filter((x) => x.statusCode === 409)) {
        assert.equal(r.json().error.code, 'idempotency_conflict');
        assert.equal(r.headers['retry-after'], '1');
      }
      const ok = results.filter((r) => r.statusCode === 200);
      assert.ok(ok.length >= 1);
      assert.equal(new Set(ok.map((r) => r.body)).size, 1, 'every success carries the same body');
      assert.equal(await countUsers(s.workspaceId), 2);
    });

    test('keys expire after 24 hours', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await call(t, s.secret, 'POST', '/v1/test/users', { email: 'k@x.test' }, { 'idempotency-key': 'old' });
      const dayAgo = new Date(Date.now() - 24 * 3600 * 1000 - 1000).toISOString();
      await t.deps.db.kysely.updateTable('idempotency_keys').set({ created_at: dayAgo, locked_at: dayAgo }).where('key', '=', 'old').execute();
      const res = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'l@x.test' }, { 'idempotency-key': 'old' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().email, 'l@x.test');
    });

    test('a key stored by a release before the caller was in the fingerprint is replayed to nobody: 422, until it expires', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ws = operatorCtx(t.deps.db.kysely, s.workspaceId);
      const member = await createUser(ws, { email: 'm@x.test', role: 'member' });
      const callers = [s.secret, await keyFor(t, s.workspaceId, member.id), await keyFor(t, s.workspaceId, null)];
      const { canonicalJson } = await import('../../src/http/idempotency.ts');
      // What those releases stored, as an upgrade finds it: sha256 of method, path and canonical
      // body, with no caller anywhere in the row (docs/design.md §Idempotency).
      const body = { email: 'up@x.test' };
      const fingerprint = createHash('sha256')
        .update(`POST /v1/test/users\n${canonicalJson(body)}`)
        .digest('hex');
      const stored = JSON.stringify({ id: 'usr_stored_before_the_upgrade', email: 'up@x.test' });
      const storeOldForm = async (key: string, ageMs: number) => {
        const at = new Date(Date.now() - ageMs).toISOString();
        await t.deps.db.kysely
          .insertInto('idempotency_keys')
          .values({
            workspace_id: s.workspaceId,
            operation: 'testCreateUser',
            key,
            fingerprint,
            state: 'done',
            status_code: 200,
            body: stored,
            locked_at: at,
            created_at: at,
          })
          .execute();
      };
      await storeOldForm('upgraded', 3600_000);
      // Whoever repeats it (the user who may have sent it, another user, a workspace key) never
      // gets its answer, and nothing runs.
      for (const secret of callers) {
        const again = await call(t, secret, 'POST', '/v1/test/users', body, { 'idempotency-key': 'upgraded' });
        assert.equal(again.statusCode, 422, again.body);
        assert.equal(again.json().error.code, 'idempotency_key_reused');
        assert.equal(again.json().error.param, 'Idempotency-Key');
        assert.equal(again.headers['idempotent-replayed'], undefined);
        assert.ok(!again.body.includes('usr_stored_before_the_upgrade'), again.body);
      }
      const other = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'other@x.test' }, { 'idempotency-key': 'upgraded' });
      assert.equal(other.json().error.code, 'idempotency_key_reused');
      assert.equal(await countUsers(s.workspaceId), 2); // the seeded user and the member
      // Once expired the key is free again, like any other.
      await storeOldForm('upgraded-long-ago', 25 * 3600_000);
      const fresh = await call(t, s.secret, 'POST', '/v1/test/users', body, { 'idempotency-key': 'upgraded-long-ago' });
      assert.equal(fresh.statusCode, 200, fresh.body);
      assert.equal(fresh.headers['idempotent-replayed'], undefined);
      assert.notEqual(fresh.body, stored);
    });

    test('an abandoned claim (crashed holder) is taken over after its lease', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const { fingerprintOf } = await import('../../src/http/idempotency.ts');
      const fingerprint = fingerprintOf('POST', '/v1/test/users', { subjectType: 'user', userId: s.userId }, { email: 'm@x.test' });
      const stale = new Date(Date.now() - 60_000).toISOString();
      await t.deps.db.kysely
        .insertInto('idempotency_keys')
        .values({
          workspace_id: s.workspaceId,
          operation: 'testCreateUser',
          key: 'crashed',
          fingerprint,
          state: 'pending',
          status_code: null,
          body: null,
          locked_at: stale,
          created_at: stale,
        })
        .execute();
      const res = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'm@x.test' }, { 'idempotency-key': 'crashed' });
      assert.equal(res.statusCode, 200);
      const fresh = new Date().toISOString();
      await t.deps.db.kysely
        .insertInto('idempotency_keys')
        .values({
          workspace_id: s.workspaceId,
          operation: 'testCreateUser',
          key: 'running',
          fingerprint,
          state: 'pending',
          status_code: null,
          body: null,
          locked_at: fresh,
          created_at: fresh,
        })
        .execute();
      const busy = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'm@x.test' }, { 'idempotency-key': 'running' });
      assert.equal(busy.statusCode, 409);
      assert.equal(busy.json().error.code, 'idempotency_conflict');
    });

    test('an abandoned claim stored nothing: a corrected request (another body) takes its key over after the lease', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const claim = async (key: string, lockedAt: string) =>
        t.deps.db.kysely
          .insertInto('idempotency_keys')
          .values({
            workspace_id: s.workspaceId,
            operation: 'testCreateUser',
            key,
            fingerprint: 'the fingerprint of the request whose holder died',
            state: 'pending',
            status_code: null,
            body: null,
            locked_at: lockedAt,
            created_at: lockedAt,
          })
          .execute();
      await claim('died', new Date(Date.now() - 60_000).toISOString());
      const fixed = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'fixed@x.test' }, { 'idempotency-key': 'died' });
      assert.equal(fixed.statusCode, 200, fixed.body);
      assert.equal(fixed.json().email, 'fixed@x.test');
      const replay = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'fixed@x.test' }, { 'idempotency-key': 'died' });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, fixed.body);
      // Within the lease the holder may still be running: another body is refused, nothing runs.
      await claim('alive', new Date().toISOString());
      const early = await call(t, s.secret, 'POST', '/v1/test/users', { email: 'early@x.test' }, { 'idempotency-key': 'alive' });
      assert.equal(early.statusCode, 422);
      assert.equal(early.json().error.code, 'idempotency_key_reused');
      assert.equal(await countUsers(s.workspaceId), 2);
    });
  },
  { routes: pipelineRoutes },
);
