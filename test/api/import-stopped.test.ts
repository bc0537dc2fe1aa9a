// An import stopped by a signal (docs/import.md §Memory): its scratch directories (the checked
// objects kept by kind, the store of externalIds) hold as much as the input, and Ctrl-C or SIGTERM
// removes them, the process then ending by the signal as it would without a handler.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { CLI } from '../helpers/process.ts';

const LINES = 60_000;

eachDialect('rolodex import stopped by a signal', (ctx) => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    test(`${signal} removes the import's scratch directories`, async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const tmp = join(t.tdb.dataDir, `tmp-${signal}`);
      mkdirSync(tmp);
      const file = join(t.tdb.dataDir, `accounts-${signal}.ndjson`);
      const line = (i: number) => JSON.stringify({ object: 'account', externalId: `a-${i}`, fields: { $name: { value: `Account ${i}` } } });
      writeFileSync(file, Array.from({ length: LINES }, (_, i) => line(i)).join('\n'));
      // The compile cache stays Node's default one, which TMPDIR would otherwise move to a new, empty one.
      const env = {
        ...process.env,
        TMPDIR: tmp,
        NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'),
        DATA_DIR: t.tdb.dataDir,
        ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}),
      };
      const child = spawn(process.execPath, [CLI, 'import', '--workspace', s.workspaceId, file], { env, stdio: 'ignore' });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
      const scratch = () => readdirSync(tmp).filter((n) => n.startsWith('rolodex-import-'));
      // Both open before the check reads the first line; the import takes seconds past that.
      // Generous: the child's start alone can take many seconds on a loaded machine.
      for (const deadline = Date.now() + 90_000; scratch().length < 2 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(scratch().length, 2, 'the import holds its objects and its ids in scratch directories');
      child.kill(signal);
      assert.equal(await exited, signal, 'the import ends by the signal, as without a handler');
      assert.deepEqual(scratch(), []);
    });
});
