// A chunk of an import's user lines is written together (src/users/import.ts), and judged as the
// lines read in order, on both databases: a later line that gives a user already there the address
// of an earlier new line is the line refused, naming that line, as when each new user was written
// at its own line; a user's update that frees an address lets a later new line of the chunk take
// it (test/api/import-chunk-order.test.ts: an earlier one, whatever the chunks, does not).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const user = (externalId: string, email: string) => JSON.stringify({ object: 'user', externalId, email, name: externalId });

eachDialect('user lines of one chunk', (ctx) => {
  test('a later line that takes the address of an earlier new user is the line refused', async () => {
    const t = ctx();
    const ws = (await seedWorkspace(t)).workspaceId;
    const path = join(t.tdb.dataDir, 'users-chunk.ndjson');
    const run = async (...lines: string[]) => {
      writeFileSync(path, lines.join('\n') + '\n');
      return rolodex(t, ['import', '--workspace', ws, path]);
    };
    assert.equal((await run(user('e-1', 'eve@acme.test'))).code, 0);

    const taken = await run(user('u-1', 'uma@acme.test'), user('e-1', 'uma@acme.test'));
    assert.equal(taken.code, 1, taken.out);
    assert.match(taken.err, /^line 2: email: another user of the workspace has the email "uma@acme\.test"$/m);
    assert.doesNotMatch(taken.err, /line 1:/);

    // The other spelling of the address is the same address.
    const spelled = await run(user('u-2', 'ann@bücher.example'), user('e-1', 'ann@xn--bcher-kva.example'));
    assert.equal(spelled.code, 1, spelled.out);
    assert.match(spelled.err, /^line 2: email: another user of the workspace has the email "ann@xn--bcher-kva\.example"$/mu);

    // Freed by an update of the chunk, an address is a later new line's to take.
    assert.equal((await run(user('e-1', 'eve.new@acme.test'), user('u-3', 'eve@acme.test'))).code, 0);
    const list = await rolodex(t, ['user', 'list', '--workspace', ws, '--json']);
    const emails = (JSON.parse(list.out) as { email: string }[]).map((u) => u.email);
    for (const email of ['eve@acme.test', 'eve.new@acme.test']) assert.ok(emails.includes(email), `${email} in ${emails.join(', ')}`);
    assert.ok(!emails.includes('uma@acme.test'), 'nothing of a refused import is written');
  });

  test('a new line that takes the address a later line keeps for its user is the line refused', async () => {
    const t = ctx();
    const ws = (await seedWorkspace(t)).workspaceId;
    const path = join(t.tdb.dataDir, 'users-kept.ndjson');
    const run = async (...lines: string[]) => {
      writeFileSync(path, lines.join('\n') + '\n');
      return rolodex(t, ['import', '--workspace', ws, path]);
    };
    assert.equal((await run(user('e-1', 'eve@acme.test'))).code, 0);
    // Line 2 renames e-1 and keeps its address: line 1, the new user, is the one that takes it.
    const renamed = JSON.stringify({ object: 'user', externalId: 'e-1', email: 'eve@acme.test', name: 'Eve Adams' });
    const kept = await run(user('u-1', 'eve@acme.test'), renamed);
    assert.equal(kept.code, 1, kept.out);
    assert.match(kept.err, /^line 1: email: another user of the workspace has the email "eve@acme\.test"$/m);
    assert.doesNotMatch(kept.err, /line 2:/);
  });
});
