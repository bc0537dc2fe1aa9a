// `rolodex key` as an operator meets it (docs/cli.md), on both databases: an option given twice is
// wrong usage, exit code 2, and nothing is made, where the last value won silently (`--scopes
// lists:read --scopes accounts:read` made a key holding accounts:read alone, `--workspace A …
// --workspace B` a key of B).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

async function counts(t: TestApp) {
  const db = t.deps.db.kysely;
  const keys = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const users = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return { keys: Number(keys.n), users: Number(users.n) };
}

eachDialect('rolodex key', (ctx) => {
  test('an option given twice is wrong usage naming it, and nothing is made', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const b = await seedWorkspace(t);
    const before = await counts(t);
    for (const [args, option] of [
      [['key', 'create', '--workspace', a.workspaceId, '--scopes', 'lists:read', '--scopes', 'accounts:read'], 'scopes'],
      [['key', 'create', '--workspace', a.workspaceId, '--scopes', 'lists:read', '--workspace', b.workspaceId], 'workspace'],
      [['key', 'create', '--workspace', a.workspaceId, '--user', a.userId, '--user', b.userId], 'user'],
      [['key', 'create', '--workspace', a.workspaceId, '--expires-in=1d', '--expires-in', '30d'], 'expires-in'],
      [['key', 'list', '--workspace', a.workspaceId, '--workspace', b.workspaceId, '--json'], 'workspace'],
      [['user', 'create', '--workspace', a.workspaceId, '--email', 'x@example.test', '--email', 'y@example.test'], 'email'],
    ] as const) {
      const r = await rolodex(t, [...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.out}`);
      assert.equal(r.out, '', args.join(' '));
      const first = r.err.split('\n')[0]!;
      assert.match(first, new RegExp(`--${option} is given twice`), args.join(' '));
      assert.match(r.err, /\nusage:\n/, args.join(' '));
      assert.deepEqual(await counts(t), before, `${args.join(' ')}: something was made`);
    }
    // A flag given twice asks for nothing else: it is not refused.
    const listed = await rolodex(t, ['key', 'list', '--workspace', a.workspaceId, '--json', '--json']);
    assert.equal(listed.code, 0, listed.err);
  });
});
