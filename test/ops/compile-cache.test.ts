// A first start holds no more memory than later ones (docs/deploy.md §Start and stop, The compile
// cache): bin/rolodex.js fills Node's compile cache with every module of src/ before the command
// loads any, so that neither a server nor an import, in any of its threads, loads Node's
// TypeScript stripper, which a process holds to its end; a server has written the cache, under
// $TMPDIR/node-compile-cache, once it listens; and a later start does not fill again.
// A fill compiles every module twice, so the tests share what one fill made where what they assert
// allows: the server's first start is the one start on an empty cache without V8 flags, and the
// other checkout starts on a copy of what it filled. An import fills the cache before it opens its
// database, so the dialect changes nothing in what it fills: the first dialect's import starts on
// an empty cache, and the other's on a copy of what that one filled, where it fills nothing; each
// checks that its own threads (SQLite's writer thread; the modules PostgreSQL's driver requires)
// load no stripper.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
    env: { NODE_OPTIONS: `--import=${file}` },
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

/** Copies of filled caches, for the tests that start on one. */
const kept = mkdtempSync(join(tmpdir(), 'rolodex-cache-kept-'));
after(() => rmSync(kept, { recursive: true, force: true }));
/** A cache that a first start of this checkout filled (its stamp, for no V8 flags): the server's below. */
let firstFilled: string | undefined;
/** The cache that the first start of this checkout filled: when the server's test did not run, filled here. */
function filledByFirstStart(): string {
  if (firstFilled === undefined) {
    const cache = join(kept, 'first');
    const r = spawnSync(process.execPath, [CLI, '--version'], { env: { ...process.env, NODE_COMPILE_CACHE: cache }, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    firstFilled = cache;
  }
  return firstFilled;
}

test('a server started on an empty compile cache has written it once it listens and loads no TypeScript stripper, and the next start fills nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-cache-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-cache-data-'));
  // The cache goes where Node puts it, under the process's temporary directory: this test's own.
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const cache = join(tmp, 'node-compile-cache');
  try {
    const p = probe(dir);
    for (const start of ['first', 'second']) {
      writeFileSync(join(dir, 'exits.log'), '');
      const server = await startServerProcess({ DATA_DIR: dataDir, TMPDIR: tmp, NODE_COMPILE_CACHE: undefined, ...p.env });
      // What the cache holds once the server listens: one subdirectory per Node version and V8
      // flags, with an entry per module compiled; beside them, the fill's stamps (files).
      const held = existsSync(cache)
        ? readdirSync(cache, { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .flatMap((version) => readdirSync(join(cache, version.name)))
        : undefined;
      assert.equal(await server.stop(), 0, server.output());
      assert.ok(held, `${start} start: the compile cache directory is made`);
      // The server's own modules and its dependencies', well over 100.
      assert.ok(held.length >= 100, `${start} start: ${held.length} entries`);
      const exits = p.exits();
      assert.equal(commands(exits).length, 1, `${start} start: ${JSON.stringify(exits)}`);
      assert.deepEqual(
        commands(exits).map((e) => e.stripper),
        [false],
        `${start} start: the server loaded the stripper`,
      );
      assert.equal(fills(exits).length, start === 'first' ? 2 : 0, `${start} start: ${JSON.stringify(exits)}`);
      if (start === 'first') {
        cpSync(cache, join(kept, 'server'), { recursive: true });
        firstFilled = join(kept, 'server');
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** The cache that the first dialect's import filled, from empty. */
let importFilled: string | undefined;
for (const dialect of testDialects()) {
  describe(`an import on an empty compile cache, or on one another import filled [${dialect}]`, () => {
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
      const cache = join(dir, 'cache');
      const from = importFilled;
      if (from !== undefined) cpSync(from, cache, { recursive: true });
      const file = join(dir, 'contacts.ndjson');
      const contact = (i: number) => ({
        object: 'contact',
        externalId: `c${i}`,
        fields: { $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' } },
      });
      writeFileSync(file, Array.from({ length: 20 }, (_, i) => JSON.stringify(contact(i))).join('\n'));
      const env = {
        ...process.env,
        DATA_DIR: tdb.dataDir,
        ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
        ...p.env,
        NODE_COMPILE_CACHE: cache,
      };
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
      // From empty: filled, as import and as require load modules, for the flags of every other
      // start and for the import's. From what an import filled: nothing.
      assert.equal(fills(exits).length, from === undefined ? 4 : 0, JSON.stringify(exits));
      if (from === undefined) {
        importFilled = join(kept, 'import');
        cpSync(cache, importFilled, { recursive: true });
      }
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
    // What the first start of this checkout filled (it fills, as the server's test checks).
    const cache = join(dir, 'cache');
    cpSync(filledByFirstStart(), cache, { recursive: true });
    const serve = async (bin: string) => {
      writeFileSync(join(dir, 'exits.log'), '');
      const env = { ...process.env, ...p.env, NODE_COMPILE_CACHE: cache };
      const r = spawnSync(process.execPath, [bin, '--version'], { env, encoding: 'utf8', timeout: 120_000 });
      assert.equal(r.status, 0, r.stderr);
      return fills(p.exits()).length;
    };
    const ours = join(root, 'bin', 'rolodex.js');
    const theirs = join(other, 'bin', 'rolodex.js');
    assert.equal(await serve(ours), 0, 'this checkout filled the cache');
    assert.equal(await serve(theirs), 2, 'the first start of the other checkout fills it for its own paths');
    assert.equal(await serve(ours), 0, "this checkout's stamp is still there");
    assert.equal(await serve(theirs), 0, "the other checkout's stamp is still there");
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
});
