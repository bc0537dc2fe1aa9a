// An import read from a pipe (docs/import.md §Format): `rolodex import --workspace W <(zcat x.gz)`
// or `/dev/stdin` reads as the same file would, in every format, its errors included; and a
// `file` line whose `path` is a pipe or a device is refused at its line, never waited on.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, createWriteStream, mkdirSync, openSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { CLI } from '../helpers/process.ts';

const FAILED = 'rolodex import: import failed, nothing was written:';

let pipes = 0;
/** A named pipe that `text` is written into once a reader opens it. */
function pipeOf(t: TestApp, text: string | Buffer): string {
  const path = join(t.tdb.dataDir, `input-${++pipes}.pipe`);
  execFileSync('mkfifo', [path]);
  // A reader that fails before reading everything leaves the writer an EPIPE, which is no concern here.
  createWriteStream(path)
    .on('error', () => {})
    .end(text);
  return path;
}

const account = (id: string, name: string) => JSON.stringify({ object: 'account', externalId: id, fields: { $name: { value: name } } });

async function names(t: TestApp, secret: string): Promise<string[]> {
  const page = (await call(t, secret, 'GET', '/v1/accounts?limit=25')).json();
  return (page.data as { fields: { $name: { value: string } } }[]).map((a) => a.fields.$name.value).sort();
}

eachDialect('rolodex import from a pipe', (ctx) => {
  test('NDJSON, a JSON array and CSV import from a pipe; their errors are those of a file', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const r1 = await rolodex(t, ['import', '--workspace', ws, pipeOf(t, [account('a-1', 'Acme'), account('a-2', 'Beta')].join('\n'))]);
    assert.equal(r1.code, 0, r1.err);
    const r2 = await rolodex(t, ['import', '--workspace', ws, pipeOf(t, `[${account('a-3', 'Gamma')}]`)]);
    assert.equal(r2.code, 0, r2.err);
    const r3 = await rolodex(t, ['import', '--workspace', ws, '--format', 'csv', '--type', 'account', pipeOf(t, 'externalId,Name\r\na-4,Delta\r\n')]);
    assert.equal(r3.code, 0, r3.err);
    assert.deepEqual(await names(t, s.secret), ['Acme', 'Beta', 'Delta', 'Gamma']);

    // The errors that read the file again from its start: a header's separator, a byte's place.
    const r4 = await rolodex(t, ['import', '--workspace', ws, '--format', 'csv', '--type', 'account', pipeOf(t, 'externalId;Name\na-5;Eps\n')]);
    assert.equal(r4.err, `${FAILED}\nline 1: (header): separates its names with ";": the cells of a CSV file are separated by commas`);
    const latin1 = Buffer.from('externalId,Name\na-5,Caf\u00e9\n', 'latin1');
    const r5 = await rolodex(t, ['import', '--workspace', ws, '--format', 'csv', '--type', 'account', pipeOf(t, latin1)]);
    assert.equal(
      r5.err,
      `${FAILED}\nline 2: (row): is not UTF-8 text (byte 0xE9, byte 8 of the line): save the file as UTF-8, e.g. with iconv -f WINDOWS-1252 -t UTF-8`,
    );
    assert.deepEqual(await names(t, s.secret), ['Acme', 'Beta', 'Delta', 'Gamma']);
  });

  test('a device is refused before anything is read', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const device of ['/dev/zero', '/dev/null']) {
      const r = await rolodex(t, ['import', '--workspace', s.workspaceId, device]);
      assert.equal(r.code, 1, r.err);
      assert.equal(r.err, `rolodex import: cannot read ${device}: a device, not a file or a pipe`);
    }
  });

  test('an import from a pipe stopped by a signal removes its copy of the input', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const tmp = join(t.tdb.dataDir, 'tmp');
    mkdirSync(tmp);
    const pipe = join(t.tdb.dataDir, 'slow.pipe');
    execFileSync('mkfifo', [pipe]);
    // The compile cache stays Node's default one, which TMPDIR would otherwise move to a new, empty one.
    const cache = join(tmpdir(), 'node-compile-cache');
    const env = {
      ...process.env,
      TMPDIR: tmp,
      NODE_COMPILE_CACHE: cache,
      DATA_DIR: t.tdb.dataDir,
      ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}),
    };
    const child = spawn(process.execPath, [CLI, 'import', '--workspace', s.workspaceId, pipe], { env, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    // The pipe's writer sends a line and stays open: the import is copying the input when stopped.
    const writer = createWriteStream(pipe).on('error', () => {});
    writer.write(`${account('a-9', 'Zeta')}\n`);
    const copies = () => readdirSync(tmp).filter((n) => n.startsWith('rolodex-input-'));
    const copied = () => copies().some((d) => (statSync(join(tmp, d, 'input'), { throwIfNoEntry: false })?.size ?? 0) > 0);
    // Generous: the child's start alone can take many seconds on a loaded machine.
    for (const deadline = Date.now() + 90_000; !copied() && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50));
    if (!copied()) {
      // The writer's open waits for a reader: one of the test's own lets the process end.
      child.kill('SIGKILL');
      closeSync(openSync(pipe, constants.O_RDONLY | constants.O_NONBLOCK));
      writer.destroy();
    }
    assert.ok(copied(), 'the import copies the pipe');
    child.kill('SIGINT');
    assert.equal(await exited, 'SIGINT', 'the import ends by the signal, as without a handler');
    writer.destroy();
    assert.deepEqual(copies(), []);
  });

  test('a file line whose path is a pipe, a device or a directory is refused at its line, not waited on', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const pipe = join(t.tdb.dataDir, 'bytes.pipe');
    execFileSync('mkfifo', [pipe]);
    const line = (path: string) => JSON.stringify({ object: 'file', externalId: 'f-1', source: 'api', filename: 'a.txt', mimeType: 'text/plain', path });
    const lines = join(t.tdb.dataDir, 'files.ndjson');
    writeFileSync(lines, line(pipe));
    let waiting: NodeJS.Timeout | undefined;
    const waited = new Promise<'waited'>((resolve) => {
      waiting = setTimeout(() => resolve('waited'), 15_000);
    });
    const r1 = await Promise.race([rolodex(t, ['import', '--workspace', s.workspaceId, lines]), waited]);
    clearTimeout(waiting);
    if (r1 === 'waited') {
      // Lets the import's open of the pipe return, so that the test ends.
      await (await open(pipe, 'w')).close();
      assert.fail('the import waited for a writer of the pipe');
    }
    assert.equal(r1.err, `${FAILED}\nline 1: path: "${pipe}" is not a regular file (a pipe or a device): name a file holding the bytes`);
    writeFileSync(lines, line('/dev/zero'));
    const r2 = await rolodex(t, ['import', '--workspace', s.workspaceId, lines]);
    assert.equal(r2.err, `${FAILED}\nline 1: path: "/dev/zero" is not a regular file (a pipe or a device): name a file holding the bytes`);
    // A directory is named as one, not as a pipe or a device.
    writeFileSync(lines, line(tmpdir()));
    const r3 = await rolodex(t, ['import', '--workspace', s.workspaceId, lines]);
    assert.equal(r3.err, `${FAILED}\nline 1: path: "${tmpdir()}" is a directory: name a file holding the bytes`);
  });
});
