// `rolodex key` as an operator meets it (docs/cli.md), on both databases: an option given twice is
// wrong usage, nothing made; a secret given for a key id is refused without being printed back,
// and no command prints back a secret; a second revoke says the key was revoked already; create
// and list show scopes and expiry.
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

interface Listed {
  id: string;
  status: string;
  scopes: string[];
  expiresAt: string | null;
}

async function listed(t: TestApp, workspaceId: string): Promise<Listed[]> {
  const r = await rolodex(t, ['key', 'list', '--workspace', workspaceId, '--json']);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as Listed[];
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

  test('key revoke given a secret refuses it without printing it back, naming the key it is', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [key] = await listed(t, s.workspaceId);
    const hidden = s.secret.slice(13); // all but `rdx_<prefix>_`, which `key list` shows
    for (const given of [s.secret, `Bearer ${s.secret}`]) {
      const r = await rolodex(t, ['key', 'revoke', given]);
      assert.equal(r.code, 2, r.err);
      assert.equal(r.out, '');
      assert.ok(!r.err.includes(hidden), `the secret is printed back: ${r.err}`);
      const first = r.err.split('\n')[0]!;
      assert.match(first, /takes the key's id, not its secret/, first);
      assert.ok(first.includes(`is key ${key!.id} of workspace ${s.workspaceId}`), first);
      assert.ok(first.includes(`rolodex key revoke ${key!.id}`), first);
    }
    assert.equal((await listed(t, s.workspaceId))[0]!.status, 'active', 'a key revoked by its secret');
    // A secret that is no key's, or part of one, is refused alike, never printed back.
    const other = `rdx_abcd1234_${'x'.repeat(43)}`;
    for (const given of [other, s.secret.slice(0, -4), `${s.secret}x`]) {
      const r = await rolodex(t, ['key', 'revoke', given]);
      assert.equal(r.code, 2, r.err);
      assert.ok(!r.err.includes(given.slice(13, 30)), `the secret is printed back: ${r.err}`);
      assert.match(r.err.split('\n')[0]!, /takes the key's id, not its secret.*`rolodex key list --workspace W` shows the ids/);
    }
  });

  test('no command prints back a secret given where an id, a workspace or an argument was expected', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const hook = await rolodex(t, ['webhook', 'add', '--workspace', s.workspaceId, '--url', 'https://hooks.example.com/in', '--all', '--json']);
    assert.equal(hook.code, 0, hook.err);
    const whsec = (JSON.parse(hook.out) as { secret: string }).secret;
    for (const [secret, hidden] of [
      [s.secret, s.secret.slice(13)],
      [whsec, whsec.slice(6)],
    ] as const) {
      for (const args of [
        ['webhook', 'remove', secret],
        ['webhook', 'test', secret],
        ['mailbox', 'remove', secret],
        ['key', 'list', '--workspace', secret],
        ['key', 'create', '--workspace', s.workspaceId, '--user', secret],
        ['key', 'revoke', 'key_x', secret],
        ['trash', 'restore', '--workspace', s.workspaceId, secret],
        ['user', 'list', '--workspace', s.workspaceId, secret],
      ]) {
        const r = await rolodex(t, args);
        assert.notEqual(r.code, 0, args.join(' '));
        assert.ok(!r.err.includes(hidden), `${args[0]} ${args[1]}: the secret is printed back: ${r.err}`);
      }
    }
  });

  test('a second revoke of a key says it was revoked already, and since when', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const id = (await listed(t, s.workspaceId))[0]!.id;
    const first = await rolodex(t, ['key', 'revoke', id, '--json']);
    assert.equal(first.code, 0, first.err);
    const revoked = JSON.parse(first.out) as { revokedAt: string; status: string; alreadyRevoked: boolean };
    assert.equal(revoked.status, 'revoked');
    assert.equal(revoked.alreadyRevoked, false);
    const again = await rolodex(t, ['key', 'revoke', id]);
    assert.equal(again.code, 0, again.err);
    assert.equal(again.out, `key ${id} is revoked already (since ${revoked.revokedAt}); nothing changed`);
    const json = await rolodex(t, ['key', 'revoke', id, '--json']);
    assert.equal(json.code, 0, json.err);
    const said = JSON.parse(json.out) as { revokedAt: string; alreadyRevoked: boolean };
    assert.equal(said.alreadyRevoked, true);
    assert.equal(said.revokedAt, revoked.revokedAt, 'the first revocation stays the one told');
    const another = (await rolodex(t, ['key', 'create', '--workspace', s.workspaceId, '--json'])).out;
    const text = await rolodex(t, ['key', 'revoke', (JSON.parse(another) as { id: string }).id]);
    assert.match(text.out, /^revoked key key_\S+$/);
  });

  test("key revoke given a key's listed prefix names the key that has it, and revokes nothing", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const made = JSON.parse((await rolodex(t, ['key', 'create', '--workspace', s.workspaceId, '--json'])).out) as { id: string; secret: string };
    const line = (await rolodex(t, ['key', 'list', '--workspace', s.workspaceId])).out.split('\n').find((l) => l.startsWith(made.id));
    const shown = line?.split(/\s+/)[1] ?? '';
    assert.equal(shown, `${made.secret.slice(0, 12)}…`, 'key list shows the prefix after the id');
    for (const given of [shown, shown.slice(0, -1)]) {
      const r = await rolodex(t, ['key', 'revoke', given]);
      assert.equal(r.code, 1);
      assert.equal(
        r.err,
        `rolodex key: "${given}" is a key's prefix, not its id: it is key ${made.id} (workspace ${s.workspaceId}); revoke a key by its id: \`rolodex key revoke ${made.id}\``,
      );
    }
    const none = await rolodex(t, ['key', 'revoke', 'rdx_zzzzzzzz…']);
    assert.match(none.err, /"rdx_zzzzzzzz…" is a key's prefix, not its id, and no key has it/);
    assert.equal((await listed(t, s.workspaceId)).find((k) => k.id === made.id)?.status, 'active');
  });

  test('key create prints the scopes and expiry of the key it made; key list when an active key expires', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = ['--workspace', s.workspaceId];
    const made = await rolodex(t, ['key', 'create', ...ws, '--scopes', 'lists:read,files:read', '--expires-in', '30d']);
    assert.equal(made.code, 0, made.err);
    const plain = await rolodex(t, ['key', 'create', ...ws, '--user', s.userId]);
    assert.equal(plain.code, 0, plain.err);
    const keys = await listed(t, s.workspaceId);
    const scoped = keys.find((k) => k.scopes.length === 2)!;
    const full = keys.find((k) => plain.out.includes(k.id))!;
    assert.ok(scoped.expiresAt);
    assert.equal(made.out.split('\n')[0], `created workspace key ${scoped.id}  lists:read,files:read  expires ${scoped.expiresAt}`);
    assert.equal(plain.out.split('\n')[0], `created user key ${full.id}  full access  never expires`);
    assert.match(made.out.split('\n')[1]!, /^secret \(shown once\): rdx_/);
    const lines = (await rolodex(t, ['key', 'list', ...ws])).out.split('\n');
    const lineOf = (id: string) => lines.find((l) => l.startsWith(id)) ?? '';
    assert.ok(lineOf(scoped.id).endsWith(`  lists:read,files:read  expires ${scoped.expiresAt}`), lineOf(scoped.id));
    assert.ok(lineOf(full.id).endsWith(`  user ${s.userId}  full access`), lineOf(full.id));
  });
});
