// A user's address is one address whichever form its domain is written in (docs/design.md
// §Members, docs/records.md §E-mail addresses), on both databases: `rolodex user create` and the
// import's `user` line with the other spelling of an existing user's address are that user's
// duplicate, refused as the same spelling is; a lookup by address (`--user` of `rolodex mailbox
// add`, channels, Knowledge) finds the user under either spelling.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { findUserRef } from '../../src/users/service.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

const UNICODE = 'ann@bücher.example';
const ASCII = 'ann@xn--bcher-kva.example';

eachDialect('users by either spelling of an internationalized domain', (ctx) => {
  test('creating a user with the other spelling of a user address is a duplicate, either way round', async () => {
    const t = ctx();
    const ws = (await seedWorkspace(t)).workspaceId;
    const create = (email: string) => rolodex(t, ['user', 'create', '--workspace', ws, '--email', email, '--json']);
    for (const [first, others] of [
      [UNICODE, [UNICODE, ASCII, 'ANN@XN--BCHER-KVA.EXAMPLE', 'Ann@BÜCHER.example']],
      ['bo@xn--bcher-kva.example', ['bo@bücher.example', 'BO@Bücher.Example']],
    ] as const) {
      const made = await create(first);
      assert.equal(made.code, 0, made.err);
      assert.equal(JSON.parse(made.out).email, first, 'stored as written');
      for (const other of others) {
        const again = await create(other);
        assert.equal(again.code, 1, `${other}: ${again.out}`);
        assert.match(again.err, /a user with email ".*" already exists in this workspace/u, other);
      }
    }
    const list = await rolodex(t, ['user', 'list', '--workspace', ws, '--json']);
    assert.deepEqual(
      JSON.parse(list.out)
        .map((u: { email: string }) => u.email)
        .filter((e: string) => e.includes('cher'))
        .sort(),
      ['ann@bücher.example', 'bo@xn--bcher-kva.example'],
    );
  });

  test('a lookup by address finds the user under either spelling', async () => {
    const t = ctx();
    const ws = (await seedWorkspace(t)).workspaceId;
    const made = JSON.parse((await rolodex(t, ['user', 'create', '--workspace', ws, '--email', UNICODE, '--json'])).out);
    const op = operatorCtx(t.deps.db.kysely, ws);
    for (const ref of [UNICODE, ASCII, ' ANN@XN--BCHER-KVA.example ', 'Ann@Bücher.EXAMPLE']) assert.equal(await findUserRef(op, { ref }), made.id, ref);
    const mailbox = await rolodex(t, ['mailbox', 'add', '--workspace', ws, '--user', ASCII, '--address', ASCII, '--json']);
    assert.equal(mailbox.code, 0, mailbox.err);
    assert.equal(JSON.parse(mailbox.out).userId, made.id);
  });

  test('an import user line with the other spelling of a user address is refused as a duplicate, new or updated', async () => {
    const t = ctx();
    const ws = (await seedWorkspace(t)).workspaceId;
    assert.equal((await rolodex(t, ['user', 'create', '--workspace', ws, '--email', UNICODE])).code, 0);
    const path = join(t.tdb.dataDir, 'users.ndjson');
    writeFileSync(path, `${JSON.stringify({ object: 'user', externalId: 'u-1', email: ASCII })}\n`);
    const r = await rolodex(t, ['import', '--workspace', ws, path]);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /line 1: email: another user of the workspace has the email "ann@xn--bcher-kva\.example"/u);
    // A re-import that gives an imported user the other spelling is refused alike.
    writeFileSync(path, `${JSON.stringify({ object: 'user', externalId: 'u-1', email: 'bo@acme.test' })}\n`);
    assert.equal((await rolodex(t, ['import', '--workspace', ws, path])).code, 0);
    writeFileSync(path, `${JSON.stringify({ object: 'user', externalId: 'u-1', email: 'ANN@Bücher.example' })}\n`);
    const again = await rolodex(t, ['import', '--workspace', ws, path]);
    assert.equal(again.code, 1, again.out);
    assert.match(again.err, /line 1: email: another user of the workspace has the email "ann@bücher\.example"/u);
  });

  test('a user address holding a control or invisible character is refused, by the CLI and an import line', async () => {
    const t = ctx();
    const ws = (await seedWorkspace(t)).workspaceId;
    for (const [email, shown] of [
      ['ann\u200b@acme.test', 'U+200B'],
      ['ann@acme.test\u00ad', 'U+00AD'],
      ['ann@ac\u0085me.test', 'U+0085'],
      ['\u202eann@acme.test', 'U+202E'],
    ] as const) {
      const made = await rolodex(t, ['user', 'create', '--workspace', ws, '--email', email]);
      assert.equal(made.code, 1, made.out);
      assert.ok(made.err.includes(`invalid email: it holds ${shown}, a control or invisible character`), made.err);
    }
    const path = join(t.tdb.dataDir, 'users.ndjson');
    writeFileSync(path, `${JSON.stringify({ object: 'user', externalId: 'u-1', email: 'bo\u2060@acme.test' })}\n`);
    const r = await rolodex(t, ['import', '--workspace', ws, path]);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /line 1: email: invalid email: it holds U\+2060/u);
    const list = await rolodex(t, ['user', 'list', '--workspace', ws, '--json']);
    assert.deepEqual(
      JSON.parse(list.out).filter((u: { email: string }) => u.email.includes('acme.test')),
      [],
    );
  });
});
