// `rolodex export … FILE` writes a temporary file beside FILE and renames it to FILE once the
// export is complete (docs/import.md §Export): a FILE that is no regular file (a named pipe, a
// device such as /dev/stdout) would be replaced by the file, not written to, so it is refused
// before the export, one line and exit code 1, and stays as it was. A symbolic link is written
// through. A FILE whose directory does not exist is told so, naming the path given, never the
// temporary file's.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

eachDialect('rolodex export to a FILE that is no regular file', (ctx) => {
  test('a named pipe as FILE is refused and left a pipe, no partial file beside it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const pipe = join(t.tdb.dataDir, 'out.pipe');
    execFileSync('mkfifo', [pipe]);
    const r = await rolodex(t, ['export', '--workspace', s.workspaceId, pipe]);
    assert.equal(r.code, 1, r.err);
    assert.equal(
      r.err,
      `rolodex export: cannot write ${pipe}: it is not a regular file (a device or a pipe, which the export would replace): leave FILE out to write to stdout`,
    );
    assert.ok(statSync(pipe).isFIFO());
    assert.deepEqual(
      readdirSync(t.tdb.dataDir).filter((n) => n.includes('out.pipe')),
      ['out.pipe'],
    );
  });

  test('a symbolic link as FILE is written through: its target holds the export, the link stays', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const dated = join(t.tdb.dataDir, 'dated');
    mkdirSync(dated);
    writeFileSync(join(dated, 'old.ndjson'), 'old\n');
    const link = join(t.tdb.dataDir, 'latest.ndjson');
    symlinkSync(join('dated', 'old.ndjson'), link);
    const dangling = join(t.tdb.dataDir, 'next.ndjson');
    symlinkSync(join('dated', 'new.ndjson'), dangling);
    for (const [file, target] of [
      [link, 'old.ndjson'],
      [dangling, 'new.ndjson'],
    ] as const) {
      const r = await rolodex(t, ['export', '--workspace', s.workspaceId, file]);
      assert.equal(r.code, 0, r.err);
      assert.ok(lstatSync(file).isSymbolicLink(), `${file} is still a link`);
      assert.equal(readlinkSync(file), join('dated', target));
      const lines = readFileSync(join(dated, target), 'utf8').trim().split('\n');
      assert.match(lines[0]!, /^\{"object":"user"/);
    }
    assert.deepEqual(readdirSync(dated).sort(), ['new.ndjson', 'old.ndjson']);
    // A link into a directory that does not exist names that directory, not the link's.
    const nowhere = join(t.tdb.dataDir, 'nowhere.ndjson');
    symlinkSync(join('gone', 'x.ndjson'), nowhere);
    const r = await rolodex(t, ['export', '--workspace', s.workspaceId, nowhere]);
    assert.equal(r.code, 1, r.err);
    assert.equal(r.err, `rolodex export: cannot write ${nowhere}: the directory ${join(t.tdb.dataDir, 'gone')} does not exist`);
  });

  test('a FILE in a directory that does not exist is one line naming that directory', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const dir = join(t.tdb.dataDir, 'no', 'such', 'dir');
    const r = await rolodex(t, ['export', '--workspace', s.workspaceId, join(dir, 'out.ndjson')]);
    assert.equal(r.code, 1, r.err);
    assert.equal(r.err, `rolodex export: cannot write ${join(dir, 'out.ndjson')}: the directory ${dir} does not exist`);
  });

  test('a FILE under a regular file names the file that is in the way', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const plain = join(t.tdb.dataDir, 'plain.txt');
    writeFileSync(plain, 'x');
    const file = join(plain, 'sub', 'out.ndjson');
    const r = await rolodex(t, ['export', '--workspace', s.workspaceId, file]);
    assert.equal(r.code, 1, r.err);
    assert.equal(r.err, `rolodex export: cannot write ${file}: ${plain} is not a directory`);
  });
});
