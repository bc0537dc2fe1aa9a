// Human listings of the CLI print text others wrote with each character a terminal acts on escaped
// (docs/cli.md): a name holding ESC sequences, `\r` or a bidirectional override cannot clear the
// operator's screen or rewrite what was printed. `--json` keeps the exact text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eachDialect, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { uploadFile } from '../helpers/files.ts';

const NAME = 'Evil\u001b[2J\u001b]0;owned\u0007\rOK\u009b31m\u202eX';
const ESCAPED = 'Evil\\u001b[2J\\u001b]0;owned\\u0007\\rOK\\u009b31m\\u202eX';
// What a terminal would act on: C0, DEL, C1 and the bidirectional controls.
const ACTS = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

async function ok(t: TestApp, ...args: string[]): Promise<string> {
  const r = await rolodex(t, args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
  return r.out;
}

/** The listing printed for humans: nothing a terminal acts on but its line breaks, the name escaped. */
function assertEscaped(out: string, what: string): void {
  for (const line of out.split('\n')) assert.doesNotMatch(line, ACTS, `${what}: ${JSON.stringify(line)}`);
  assert.ok(out.includes(ESCAPED), `${what} shows the name escaped: ${JSON.stringify(out)}`);
}

eachDialect('CLI listings and control characters', (ctx) => {
  test('every listing prints a name with control characters escaped; --json keeps it exact', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const at = ['--workspace', ws];
    assertEscaped(
      await ok(t, 'channel', 'create', ...at, '--provider', 'slack', '--name', NAME, '--visibility', 'public', '--external-id', NAME),
      'channel create',
    );
    assertEscaped(await ok(t, 'channel', 'list', ...at), 'channel list');
    assert.equal((JSON.parse(await ok(t, 'channel', 'list', ...at, '--json')) as { name: string }[])[0]?.name, NAME);

    assertEscaped(await ok(t, 'workspace', 'create', '--name', NAME), 'workspace create');
    assertEscaped(await ok(t, 'workspace', 'list'), 'workspace list');
    assert.ok((JSON.parse(await ok(t, 'workspace', 'list', '--json')) as { name: string }[]).some((w) => w.name === NAME));

    assertEscaped(await ok(t, 'definition', 'add', ...at, '--type', 'account', '--key', 'tier', '--label', NAME, '--value-type', 'SINGLE_SELECT'), 'add');
    assertEscaped(await ok(t, 'definition', 'option', 'add', ...at, '--type', 'account', '--field', 'tier', '--label', NAME), 'option add');
    await ok(
      t,
      'definition',
      'add',
      ...at,
      '--type',
      'account',
      '--key',
      'peer',
      '--label',
      NAME,
      '--relationship',
      '--cardinality',
      'has_one',
      '--target',
      'contact',
    );
    const list = await ok(t, 'definition', 'list', ...at, '--type', 'account');
    assertEscaped(list, 'definition list');
    assert.equal(list.split(ESCAPED).length - 1, 3, 'the field, its option and the relationship');
    assertEscaped(await ok(t, 'definition', 'type', 'add', ...at, '--slug', 'project', '--label', NAME), 'type add');
    assertEscaped(await ok(t, 'definition', 'types', ...at), 'definition types');

    await ok(t, 'user', 'create', ...at, '--email', 'eve@evil.test', '--first-name', NAME, '--last-name', 'Doe');
    assertEscaped(await ok(t, 'user', 'list', ...at), 'user list');
    assertEscaped(await ok(t, 'mailbox', 'add', ...at, '--user', 'eve@evil.test', '--address', 'eve@evil.test', '--external-id', NAME), 'mailbox add');
    assertEscaped(await ok(t, 'mailbox', 'list', ...at), 'mailbox list');
    await ok(t, 'webhook', 'add', ...at, '--url', 'https://hooks.example.com/in', '--all', '--description', NAME);
    assertEscaped(await ok(t, 'webhook', 'list', ...at), 'webhook list');
    assert.equal((JSON.parse(await ok(t, 'webhook', 'list', ...at, '--json')) as { description: string }[])[0]?.description, NAME);

    // A file name holds no control character (the API refuses one), but may hold a bidi override.
    await uploadFile(t, s.secret, Buffer.from('notes'), { filename: 'invoice\u202etxt.exe', mimeType: 'text/plain', purpose: 'knowledge_workspace' });
    const knowledge = await ok(t, 'knowledge', 'list', ...at);
    for (const line of knowledge.split('\n')) assert.doesNotMatch(line, ACTS, `knowledge list: ${JSON.stringify(line)}`);
    assert.ok(knowledge.includes('"invoice\\u202etxt.exe"'), knowledge);
  });

  test('a name holding a backslash sequence prints apart from one holding the character it spells', async () => {
    const t = ctx();
    const literal = 'A\\u001bB\\nC';
    const esc = 'A\u001bB\nC';
    const one = await ok(t, 'workspace', 'create', '--name', literal);
    const other = await ok(t, 'workspace', 'create', '--name', esc);
    assert.ok(one.endsWith('(A\\\\u001bB\\\\nC)'), one);
    assert.ok(other.endsWith('(A\\u001bB\\nC)'), other);
    const listed = (await ok(t, 'workspace', 'list')).split('\n').map((l) => l.split('  ')[1]);
    assert.ok(listed.includes('A\\\\u001bB\\\\nC') && listed.includes('A\\u001bB\\nC'), JSON.stringify(listed));
    const names = (JSON.parse(await ok(t, 'workspace', 'list', '--json')) as { name: string }[]).map((w) => w.name);
    assert.ok(names.includes(literal) && names.includes(esc), JSON.stringify(names));
  });
});
