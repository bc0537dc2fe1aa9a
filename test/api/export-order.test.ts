// The order of `rolodex export`'s lines (docs/import.md §Export), on both databases: of the demo
// workspace, which holds every kind, each kind's lines come together, in the documented order.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { eachDialect } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const ORDER = [
  ...['definition', 'workspace', 'user', 'file', 'channel', 'mailbox'],
  ...['account', 'contact', 'opportunity', 'note', 'task', 'record'],
  ...['list', 'meeting', 'message', 'email'],
];

eachDialect('the order of an export', (ctx) => {
  test('definitions, the workspace, users, files, channels, mailboxes, records type by type, lists, meetings, messages, e-mails', async () => {
    const t = ctx();
    const demo = await rolodex(t, ['demo', '--json']);
    assert.equal(demo.code, 0, demo.err);
    const ws = (JSON.parse(demo.out) as { workspace: { id: string } }).workspace.id;
    assert.equal((await rolodex(t, ['workspace', 'set', '--workspace', ws, '--default-country', 'DE'])).code, 0);
    const file = join(t.tdb.dataDir, 'order.ndjson');
    const out = await rolodex(t, ['export', '--workspace', ws, '--files', join(t.tdb.dataDir, 'order-files'), file]);
    assert.equal(out.code, 0, out.err);
    const runs: string[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line === '') continue;
      const kind = (JSON.parse(line) as { object: string }).object;
      if (runs.at(-1) !== kind) runs.push(kind);
    }
    assert.deepEqual(runs, ORDER);
  });
});
