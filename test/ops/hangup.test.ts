// SIGHUP, the signal of a terminal that closes or an SSH session that ends (docs/deploy.md §Start
// and stop), stops the server as SIGTERM does: the request in flight is answered, every process
// exits with code 0 and the note of its address is removed. It ended every process at once by the
// signal's default action, cutting requests in flight, with no line in the log: Node sets SIGHUP
// back to its default at start, so `nohup` never kept it from that end.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { alive, BIN, cleanUp, halfSentRequest, launch, type Launched, until } from '../helpers/launch.ts';
import { freePort } from '../helpers/process.ts';

const START_MS = 30_000;
const STOP_MS = 12_000;

describe('SIGHUP [sqlite]', () => {
  let tdb: TestDb;
  let secret = '';
  let l: Launched | undefined;
  before(async () => {
    tdb = await createTestDb('sqlite');
    const ws = await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Hangs up' });
    secret = (await createKey(operatorCtx(tdb.db.kysely, ws.id), { userId: null, scopes: null, expiresInMs: null })).secret;
  });
  after(async () => {
    cleanUp(l);
    await tdb.drop();
  });

  for (const [workers, to] of [
    ['2', 'the process group, as a terminal that closes'],
    ['1', 'the server alone'],
  ] as const) {
    test(`WORKERS=${workers}, to ${to}: the request in flight is answered, then every process stops with code 0`, async () => {
      const port = await freePort();
      l = launch(process.execPath, [BIN, 'serve'], { DATA_DIR: tdb.dataDir, PORT: String(port), WORKERS: workers }, { detached: true });
      await until('listening', () => /rolodex listening on/.test(l!.output()), START_MS, l.output);
      const notes = join(tdb.dataDir, 'servers');
      assert.equal(readdirSync(notes).length, 1, 'the server noted its address');
      const inFlight = halfSentRequest(
        `http://127.0.0.1:${port}/v1/lists`,
        { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' },
        '{"fields":{"$name":"In flight","$objectType":"contact"}}',
      );
      await new Promise((r) => setTimeout(r, 300));
      const pids = l.pids();
      if (workers === '1') l.child.kill('SIGHUP');
      else process.kill(-l.child.pid!, 'SIGHUP');
      await until('shutting down', () => /"signal":"SIGHUP"[^\n]*"msg":"shutting down"/.test(l!.output()), STOP_MS, l.output);
      const answer = await inFlight.finish();
      assert.equal(answer.status, 200, answer.body);
      assert.match(answer.body, /"id":"lst_/);
      assert.deepEqual(await l.exited, { code: 0, signal: null });
      await until('every server process stopped', () => pids.every((p) => !alive(p)), STOP_MS, l.output);
      assert.ok(!existsSync(notes) || readdirSync(notes).length === 0, 'the note of its address is removed');
    });
  }
});
