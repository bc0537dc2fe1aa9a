// The README's first minutes, as a user runs them: start the server, create a workspace, a user
// and a key with the CLI, call the API with curl's headers, stop the server with SIGTERM.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { rolodexCli, startServerProcess, type ServerProcess } from '../helpers/process.ts';

for (const dialect of testDialects()) {
  describe(`walkthrough [${dialect}]`, () => {
    let tdb: TestDb;
    let env: Record<string, string>;
    let server: ServerProcess;
    let root: string;
    let dataDir: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      // A data directory the server has never seen: it must create what it needs.
      root = mkdtempSync(join(tmpdir(), 'rolodex-walk-'));
      dataDir = join(root, 'data');
      env = { DATA_DIR: dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
      server = await startServerProcess(env);
    });
    after(async () => {
      await server?.stop('SIGKILL');
      await tdb.drop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    test('workspace → user → key → /v1/auth/validate, then a graceful stop', async () => {
      const ws = rolodexCli(env, 'workspace', 'create', '--name', 'Acme', '--json');
      assert.equal(ws.code, 0, ws.stderr);
      const wsId = JSON.parse(ws.stdout).id;
      const user = rolodexCli(env, 'user', 'create', '--workspace', wsId, '--email', 'ann@acme.test', '--role', 'admin', '--json');
      assert.equal(user.code, 0, user.stderr);
      const key = rolodexCli(env, 'key', 'create', '--workspace', wsId, '--user', JSON.parse(user.stdout).id, '--scopes', 'lists:read', '--json');
      assert.equal(key.code, 0, key.stderr);
      const secret = JSON.parse(key.stdout).secret as string;

      const res = await fetch(`${server.baseUrl}/v1/auth/validate`, { headers: { Authorization: `Bearer ${secret}`, 'Service-Version': '2026-03-01' } });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { active: true, tokenType: 'api_key', subjectType: 'user', scopes: ['lists:read'] });
      assert.ok(res.headers.get('x-request-id'));

      const ready = await fetch(`${server.baseUrl}/readyz`);
      assert.equal(ready.status, 200);

      const code = await server.stop('SIGTERM');
      assert.equal(code, 0, server.output());
      assert.match(server.output(), /shutting down/);
      assert.ok(!server.output().includes(secret.slice(14)), 'the secret never reaches the server log');
    });
  });
}
