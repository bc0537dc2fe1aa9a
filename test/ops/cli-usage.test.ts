// Wrong usage names what is wrong, exit code 2, and nothing is done (docs/cli.md): a `serve` flag
// with a wrong value is named as the flag given, not as the variable it sets (`--workers 0` said
// "WORKERS must be…"); a command without its subcommand says so, where `trash --workspace W` said
// "--workspace is required" and `definition option` said `unknown subcommand "option "`; and
// `--version` takes no argument, where it ignored one.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';

const root = mkdtempSync(join(tmpdir(), 'rolodex-usage-'));
after(() => rmSync(root, { recursive: true, force: true }));
// Nothing is done: not even DATA_DIR is made.
const dataDir = join(root, 'data');

async function run(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env: { DATA_DIR: dataDir, ...env }, isTty: false };
  const code = await main(args, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The first line on stderr, after an exit code 2 with nothing on stdout and the usage printed. */
async function usage(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await run(args, env);
  assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
  assert.equal(r.out, '', args.join(' '));
  assert.match(r.err, /\nusage:\n/, args.join(' '));
  assert.equal(existsSync(dataDir), false, `${args.join(' ')}: nothing made`);
  return r.err.split('\n')[0]!;
}

test('a serve flag with a wrong value is named as the flag, not as the variable it sets', async () => {
  assert.equal(await usage(['serve', '--workers', '0']), 'rolodex serve: --workers must be a whole number from 1 to 256 (got "0")');
  assert.equal(await usage(['serve', '--port', '70000']), 'rolodex serve: --port must be a whole number from 0 to 65535 (got "70000")');
  // The variable itself, set wrong, is still named as the variable: a refused configuration.
  const r = await run(['serve', '--port', '0'], { WORKERS: '0' });
  assert.equal(r.code, 1);
  assert.equal(r.err, 'rolodex serve: WORKERS must be a whole number from 1 to 256 (got "0")');
});

test('a command without its subcommand, or with an unknown one, names the subcommands', async () => {
  const cases: [string[], string][] = [
    [['trash', '--workspace', 'ws_x'], 'rolodex trash: a subcommand is required (list, restore, purge)'],
    [['channel', '--workspace', 'ws_x'], 'rolodex channel: a subcommand is required (create, list, visibility, add-members, remove-members)'],
    [['channel'], 'rolodex channel: a subcommand is required (create, list, visibility, add-members, remove-members)'],
    [['user', '--workspace', 'ws_x'], 'rolodex user: a subcommand is required (create, list)'],
    [['key', '--workspace', 'ws_x'], 'rolodex key: a subcommand is required (create, list, revoke)'],
    [['knowledge', '--workspace', 'ws_x'], 'rolodex knowledge: a subcommand is required (list)'],
    [['definition', '--workspace', 'ws_x'], 'rolodex definition: a subcommand is required (add, option, list, type, types, rename, archive, unarchive)'],
    [['trash', 'empty', '--workspace', 'ws_x'], 'rolodex trash: unknown subcommand "empty" (list, restore, purge)'],
    [['definition', 'option'], 'rolodex definition: a subcommand of option is required (add, rename)'],
    [['definition', 'option', '--workspace', 'ws_x'], 'rolodex definition: a subcommand of option is required (add, rename)'],
    [['definition', 'option', 'remove'], 'rolodex definition: unknown subcommand "option remove" (add, rename)'],
    [['definition', 'type'], 'rolodex definition: a subcommand of type is required (add)'],
  ];
  for (const [args, line] of cases) assert.equal(await usage(args), line, args.join(' '));
});

test('--version takes no argument: one more is wrong usage, not ignored', async () => {
  for (const name of ['--version', '-v', 'version']) {
    assert.equal(await usage([name, 'extra']), `rolodex ${name}: unexpected argument "extra"`);
    const r = await run([name]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^rolodex \S+ \(Node\.js /);
  }
});
