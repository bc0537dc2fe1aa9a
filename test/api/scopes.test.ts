// The 39 public scopes (docs/design.md §Scopes): each is accepted by `rolodex key create --scopes`
// and reported by GET /v1/auth/validate, whose documented enum lists exactly them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PUBLIC_SCOPES } from '../../src/auth/scopes.ts';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { loadDocument } from '../helpers/openapi-ops.ts';

// The contract's table, written out independently of the source.
const CONTRACT = [
  ...['lists', 'accounts', 'contacts', 'opportunities', 'tasks', 'notes', 'meetings', 'custom_objects'].flatMap((r) => [
    `${r}:create`,
    `${r}:update`,
    `${r}:read`,
  ]),
  'emails:create',
  'emails:read',
  'members:read',
  'messages:read',
  'files:create',
  'files:read',
  'channels:read',
  ...['accounts', 'contacts', 'opportunities', 'tasks', 'notes', 'meetings', 'lists', 'custom_objects'].map((r) => `${r}:delete`),
];

async function cliKey(t: TestApp, workspaceId: string, userId: string, scopes: string): Promise<{ code: number; out: any; err: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  const io: Io = { out: (s) => stdout.push(s), err: (s) => stderr.push(s), env, isTty: false };
  const code = await main(['key', 'create', '--workspace', workspaceId, '--user', userId, '--scopes', scopes, '--json'], io);
  return { code, out: code === 0 ? JSON.parse(stdout.join('')) : null, err: stderr.join('') };
}

test('the public scopes are the 39 of the contract', () => {
  assert.equal(CONTRACT.length, 39);
  assert.deepEqual([...PUBLIC_SCOPES].sort(), [...CONTRACT].sort());
});

eachDialect('scopes', (ctx) => {
  test('every scope is accepted by the CLI, alone and all together, and reported by validate', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const scope of CONTRACT) {
      const key = await cliKey(t, s.workspaceId, s.userId, scope);
      assert.equal(key.code, 0, `${scope}: ${key.err}`);
      assert.deepEqual(key.out.scopes, [scope]);
      const res = await call(t, key.out.secret, 'GET', '/v1/auth/validate');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().scopes, [scope]);
    }
    const all = await cliKey(t, s.workspaceId, s.userId, CONTRACT.join(','));
    assert.equal(all.code, 0, all.err);
    assert.deepEqual((await call(t, all.out.secret, 'GET', '/v1/auth/validate')).json().scopes, CONTRACT);
    const unknown = await cliKey(t, s.workspaceId, s.userId, 'members:update');
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown scope "members:update"/);
  });

  test("validate's documented scope enum is exactly the public scopes", async () => {
    const doc = await loadDocument(ctx());
    const schema = doc.paths['/v1/auth/validate'].get.responses['200'].content['application/json'].schema;
    const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema;
    const items = resolved.properties.scopes.items;
    const values = (items.anyOf ?? items.oneOf ?? []).map((v: { const?: string; enum?: string[] }) => v.const ?? v.enum?.[0]);
    assert.deepEqual([...values].sort(), [...CONTRACT].sort());
  });
});
