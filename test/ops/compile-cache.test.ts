// A first start holds no more memory than later ones (docs/deploy.md §Start and stop, The compile
// cache): bin/rolodex.js fills Node's compile cache with every module of src/ before the command
// loads any, so that neither a server nor an import, in any of its threads, loads Node's
// TypeScript stripper, which a process holds to its end; and a later start does not fill again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { CLI, startServerProcess } from '../helpers/process.ts';

interface Exit {
  pid: string;
  thread: 'main' | 'thread';
  /** The script the process was started with: rolodex.js, or compile-cache.js for a fill. */
  script: string;
  stripper: boolean;
}

/** Loaded by every start of Node and every thread (NODE_OPTIONS): at its end, says whether it loaded the stripper. */
function probe(dir: string): { env: Record<string, string>; exits(): Exit[] } {
  const log = join(dir, 'exits.log');
  const file = join(dir, 'probe.mjs');
  writeFileSync(
    file,
    `import { appendFileSync } from 'node:fs';
import { basename } from 'node:path';
import { isMainThread } from 'node:worker_threads';
process.on('exit', () => appendFileSync(${JSON.stringify(log)}, [process.pid, isMainThread ? 'main' : 'thread', basename(process.argv[1] ?? ''), process.moduleLoadList.some((m) => m.includes('amaro'))].join(' ') + '\\n'));
`,
  );
  writeFileSync(log, '');
  return {
    env: { NODE_OPTIONS: `--import=${file}`, NODE_COMPILE_CACHE: join(dir, 'cache') },
    exits: () =>
      readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [pid, thread, script, stripper] = l.split(' ');
          return { pid: pid!, thread: thread as Exit['thread'], script: script!, stripper: stripper === 'true' };
        }),
  };
}

const fills = (exits: Exit[]) => exits.filter((e) => e.script === 'compile-cache.js');
const commands = (exits: Exit[]) => exits.filter((e) => e.script !== 'compile-cache.js');

test('a server started on an empty compile cache loads no TypeScript stripper, and the next start fills nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-cache-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-cache-data-'));
  try {
    const p = probe(dir);
    for (const start of ['first', 'second']) {
      writeFileSync(join(dir, 'exits.log'), '');
      const server = await startServerProcess({ DATA_DIR: dataDir, ...p.env });
      assert.equal(await server.stop(), 0, server.output());
      const exits = p.exits();
      assert.equal(commands(exits).length, 1, `${start} start: ${JSON.stringify(exits)}`);
      assert.deepEqual(
        commands(exits).map((e) => e.stripper),
        [false],
        `${start} start: the server loaded the stripper`,
      );
      assert.equal(fills(exits).length, start === 'first' ? 2 : 0, `${start} start: ${JSON.stringify(exits)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
});

for (const dialect of testDialects()) {
  describe(`an import on an empty compile cache [${dialect}]`, () => {
    let tdb: TestDb;
    let dir: string;
    let workspaceId: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      workspaceId = (await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Cache' })).id;
      dir = mkdtempSync(join(tmpdir(), 'rolodex-cache-'));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await tdb.drop();
    });

    test('loads no TypeScript stripper in any of its threads', () => {
      const p = probe(dir);
      const file = join(dir, 'contacts.ndjson');
      const contact = (i: number) => ({
        object: 'contact',
        externalId: `c${i}`,
        fields: { $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' } },
      });
      writeFileSync(file, Array.from({ length: 20 }, (_, i) => JSON.stringify(contact(i))).join('\n'));
      const env = { ...process.env, DATA_DIR: tdb.dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}), ...p.env };
      const r = spawnSync(process.execPath, [CLI, 'import', '--workspace', workspaceId, file, '--json'], { env, encoding: 'utf8', timeout: 120_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).counts.contact, 20);
      const exits = p.exits();
      // The import's process (started again under its V8 flags, which key the cache's entries)
      // and, on SQLite, its writer thread.
      const threads = commands(exits).map((e) => e.thread);
      assert.deepEqual(threads.sort(), dialect === 'sqlite' ? ['main', 'thread'] : ['main'], JSON.stringify(exits));
      assert.deepEqual(
        commands(exits).filter((e) => e.stripper),
        [],
        `the import loaded the stripper: ${JSON.stringify(exits)}`,
      );
      // Filled, as import and as require load modules, for the flags of every other start and for the import's.
      assert.equal(fills(exits).length, 4, JSON.stringify(exits));
    });
  });
}

test('two checkouts sharing a compile cache each keep their stamp: neither fills again after the other', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-cache-'));
  const other = mkdtempSync(join(tmpdir(), 'rolodex-checkout-'));
  try {
    // A second checkout of the same code: its own bin/ and src/, the same dependencies.
    const root = fileURLToPath(new URL('../../', import.meta.url));
    for (const part of ['bin', 'src']) cpSync(join(root, part), join(other, part), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(other, 'node_modules'));
    writeFileSync(join(other, 'package.json'), readFileSync(join(root, 'package.json')));
    const p = probe(dir);
    const serve = async (bin: string) => {
      writeFileSync(join(dir, 'exits.log'), '');
      const r = spawnSync(process.execPath, [bin, '--version'], { env: { ...process.env, ...p.env }, encoding: 'utf8', timeout: 120_000 });
      assert.equal(r.status, 0, r.stderr);
      return fills(p.exits()).length;
    };
    const ours = join(root, 'bin', 'rolodex.js');
    const theirs = join(other, 'bin', 'rolodex.js');
    assert.equal(await serve(ours), 2, 'the first start of this checkout fills the cache');
    assert.equal(await serve(theirs), 2, 'the first start of the other checkout fills it for its own paths');
    assert.equal(await serve(ours), 0, "this checkout's stamp is still there");
    assert.equal(await serve(theirs), 0, "the other checkout's stamp is still there");
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
});
