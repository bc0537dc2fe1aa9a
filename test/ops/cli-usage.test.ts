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
import { loadConfig } from '../../src/config.ts';

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

// A HOST written as a URL or with its port made no default PUBLIC_BASE_URL, and every command
// printed a TypeError's stack trace instead of a line naming the variable (docs/deploy.md
// §Configuration).
test('a HOST that is no address or host name is one line naming it, for every command', async () => {
  const line = (v: string) => `HOST must be an IP address or a host name, without a scheme, port or brackets (got "${v}")`;
  for (const host of ['http://0.0.0.0', '0.0.0.0:3000', '[::1]', 'api host', 'db.internal:5432/x']) {
    for (const args of [['serve'], ['workspace', 'list'], ['migrate']]) {
      const r = await run(args, { HOST: host });
      assert.equal(r.code, 1, `${host} ${args.join(' ')}: ${r.err}`);
      assert.equal(r.err, `rolodex ${args[0]}: ${line(host)}`);
      assert.equal(existsSync(dataDir), false, `${host}: nothing made`);
    }
  }
  assert.equal(
    await usage(['serve', '--host', '0.0.0.0:3000']),
    `rolodex serve: --host must be an IP address or a host name, without a scheme, port or brackets (got "0.0.0.0:3000")`,
  );
  // An IPv6 address with its zone is an address, but no URL holds it: the default PUBLIC_BASE_URL
  // cannot be made of it, and the variable to set is named.
  const zoned = await run(['workspace', 'list'], { HOST: 'fe80::1%lo' });
  assert.equal(zoned.code, 1, zoned.err);
  assert.equal(zoned.err, 'rolodex workspace: PUBLIC_BASE_URL must be set: HOST "fe80::1%lo" makes no URL (http://[fe80::1%lo]:3000)');
  for (const [host, base] of [
    ['::1', 'http://[::1]:3000'],
    ['localhost', 'http://localhost:3000'],
    ['0.0.0.0', 'http://127.0.0.1:3000'],
    // Every interface, however IPv6 writes it: clients are given 127.0.0.1, not [::0].
    ['::', 'http://127.0.0.1:3000'],
    ['::0', 'http://127.0.0.1:3000'],
    ['0:0:0:0:0:0:0:0', 'http://127.0.0.1:3000'],
    ['my_service', 'http://my_service:3000'],
    ['fe80::1%lo', 'https://api.example.com'],
  ] as const) {
    const env = { HOST: host, ...(host.includes('%') ? { PUBLIC_BASE_URL: base } : {}) };
    assert.equal(loadConfig(env).publicBaseUrl, base, host);
  }
});

// A bad value of an option taking a fixed set or form was wrong usage (2) when the CLI checked it
// (`--value-type`) but a refusal (1) when the service did (`--role`, `--visibility`, after the
// database was opened): each is wrong usage in one line naming the option, the value given and
// what it takes, before anything is done (here: before DATA_DIR, which does not exist, is read).
// Upload and download addresses are PUBLIC_BASE_URL followed by a path, and `httpLink`
// PUBLIC_APP_URL followed by one: a query or a fragment in the variable swallowed the path
// (`https://api.example.com/?x=1/uploads/…`), and credentials went to every client. The server
// started and handed such addresses out (docs/config.md).
test('a PUBLIC_BASE_URL or PUBLIC_APP_URL that a path cannot follow is one line naming it, for every command', async () => {
  for (const name of ['PUBLIC_BASE_URL', 'PUBLIC_APP_URL']) {
    for (const [value, shown, what] of [
      ['https://api.example.com/?x=1', 'https://api.example.com/?x=1', 'a query'],
      ['https://api.example.com/rolodex#top', 'https://api.example.com/rolodex#top', 'a fragment'],
      ['https://ops:hunter2@api.example.com', 'https://ops:***@api.example.com', 'credentials'],
    ]) {
      for (const args of [['workspace', 'list'], ['migrate']]) {
        const r = await run(args, { [name]: value! });
        assert.equal(r.code, 1, `${name}=${value} ${args.join(' ')}: ${r.err}`);
        assert.equal(r.err, `rolodex ${args[0]}: ${name} must be a URL without ${what}, since paths are added to it (got "${shown}")`);
        assert.equal(existsSync(dataDir), false, `${name}=${value}: nothing made`);
      }
    }
  }
  // A path, as behind a proxy that serves the API under one, is kept, without its final slash.
  const config = loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/rolodex/', PUBLIC_APP_URL: 'https://app.example.com/crm' });
  assert.equal(config.publicBaseUrl, 'https://api.example.com/rolodex');
  assert.equal(config.publicAppUrl, 'https://app.example.com/crm');
});

test('a bad value of an option with a fixed set of values or a fixed form is wrong usage, nothing done', async () => {
  const w = ['--workspace', 'ws_x'];
  const field = ['definition', 'add', ...w, '--type', 'account', '--key', 'k', '--label', 'L'];
  const cases: [string[], string | RegExp][] = [
    [['user', 'create', ...w, '--email', 'a@b.test', '--role', 'god'], 'rolodex user: --role must be admin or member (got "god")'],
    [
      ['channel', 'create', ...w, '--provider', 'slack', '--name', 'ops', '--visibility', 'secret'],
      'rolodex channel: --visibility must be one of public, restricted, private (got "secret")',
    ],
    [['channel', 'visibility', ...w, 'ops', 'secret'], 'rolodex channel: VISIBILITY must be one of public, restricted, private (got "secret")'],
    [
      ['mailbox', 'add', ...w, '--user', 'u', '--address', 'a@b.test', '--others-see', 'ALL'],
      'rolodex mailbox: --others-see must be FULL or METADATA (got "ALL")',
    ],
    [['import', ...w, 'x.ndjson', '--commit', 'now'], 'rolodex import: --commit must be atomic or batched (got "now")'],
    [['import', ...w, 'x.ndjson', '--format', 'xml'], 'rolodex import: --format must be ndjson or csv (got "xml")'],
    [
      [...field, '--value-type', 'WORDS'],
      `rolodex definition: --value-type must be one of ${['ADDRESS', 'CHECKBOX', 'CURRENCY', 'DATETIME', 'EMAIL', 'FULL_NAME', 'MARKDOWN', 'MULTI_SELECT', 'NUMBER', 'SINGLE_SELECT', 'SOCIAL_HANDLE', 'TELEPHONE', 'TEXT', 'URL'].join(', ')} (got "WORDS")`,
    ],
    [
      [...field, '--value-type', 'CURRENCY', '--currency', 'euro'],
      'rolodex definition: --currency must be a three-letter ISO 4217 code such as EUR (got "euro")',
    ],
    [
      [...field, '--value-type', 'CURRENCY', '--currency', 'ZZZ'],
      'rolodex definition: --currency must be a three-letter ISO 4217 code such as EUR (got "ZZZ")',
    ],
    [
      [...field, '--value-type', 'TELEPHONE', '--default-country', 'XX'],
      'rolodex definition: --default-country must be an ISO 3166-1 alpha-2 country code such as DE (got "XX")',
    ],
    [
      [...field, '--value-type', 'SOCIAL_HANDLE', '--handle-service', 'MYSPACE'],
      'rolodex definition: --handle-service must be one of TWITTER, LINKEDIN, FACEBOOK, INSTAGRAM (got "MYSPACE")',
    ],
    [
      [...field, '--relationship', '--cardinality', 'many', '--target', 'contact'],
      'rolodex definition: --cardinality must be has_one or has_many (got "many")',
    ],
    [
      ['workspace', 'set', ...w, '--default-country', 'XX'],
      'rolodex workspace: --default-country must be an ISO 3166-1 alpha-2 country code such as DE (got "XX")',
    ],
    [
      ['webhook', 'replay', 'whk_x', '--since', 'March 1'],
      'rolodex webhook: --since must be a date-time with a time zone, ISO 8601 such as 2026-03-01T00:00:00Z (got "March 1")',
    ],
    [['key', 'create', ...w, '--expires-in', 'soon'], 'rolodex key: --expires-in: invalid duration "soon": use a number followed by s, m, h or d (e.g. 30d)'],
    [['key', 'create', ...w, '--scopes', 'root'], /^rolodex key: --scopes: unknown scope "root"; known scopes: lists:create, /],
    [['trash', 'purge', ...w, '--older-than', 'soon'], 'rolodex trash: --older-than takes a number of days (30d), hours (12h) or minutes (90m), not "soon"'],
  ];
  for (const [args, line] of cases) {
    const first = await usage(args);
    if (typeof line === 'string') assert.equal(first, line, args.join(' '));
    else assert.match(first, line, args.join(' '));
  }
  // What only the database can judge stays a refusal: here, that there is no database at all.
  for (const args of [
    ['user', 'create', ...w, '--email', 'a@b.test', '--role', 'admin'],
    ['channel', 'create', ...w, '--provider', 'slack', '--name', 'ops', '--visibility', 'public'],
    ['workspace', 'set', ...w, '--default-country', 'de'],
  ]) {
    const r = await run(args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, /^rolodex \w+: no database at /);
  }
});

// `--expires-in -5d` got parseArgs' "argument is ambiguous", over three lines, where any other
// bad duration is told what a duration is (docs/cli.md, on durations).
test('a value starting with "-" meets the check of its option; an option given in its place is one line', async () => {
  const w = ['--workspace', 'ws_x'];
  const cases: [string[], string][] = [
    [['key', 'create', ...w, '--expires-in', '-5d'], 'rolodex key: --expires-in: invalid duration "-5d": use a number followed by s, m, h or d (e.g. 30d)'],
    [['key', 'create', '--expires-in', '-1', ...w], 'rolodex key: --expires-in: invalid duration "-1": use a number followed by s, m, h or d (e.g. 30d)'],
    [['trash', 'purge', ...w, '--older-than', '-5d'], 'rolodex trash: --older-than takes a number of days (30d), hours (12h) or minutes (90m), not "-5d"'],
    [['serve', '--port', '-1'], 'rolodex serve: --port must be a whole number from 0 to 65535 (got "-1")'],
    [['user', 'create', ...w, '--email', 'a@b.test', '--role', '-admin'], 'rolodex user: --role must be admin or member (got "-admin")'],
    [
      ['key', 'create', '--workspace', '--json'],
      'rolodex key: --workspace needs a value, not the option --json (a value starting with "-" is written --workspace=VALUE)',
    ],
  ];
  for (const [args, line] of cases) {
    const r = await run(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.equal(r.err.split('\nusage:\n')[0], line, args.join(' '));
  }
  // A good value that starts with "-" is the option's: the command goes on (to find no database).
  const named = await run(['user', 'create', ...w, '--email', 'a@b.test', '--name', '-Ann']);
  assert.equal(named.code, 1, named.err);
  assert.match(named.err, /^rolodex user: no database at /);
});

// `definition add --relationship … --unique` made a relationship that was not unique, and `add
// --value-type TEXT … --cardinality has_one --target account` (without --relationship) a TEXT
// field: options a form of the command does not take were ignored, where docs/cli.md makes any
// argument a command does not take wrong usage.
test('an option the form of `definition` does not take is wrong usage, nothing done', async () => {
  const w = ['--workspace', 'ws_x'];
  const add = ['definition', 'add', ...w, '--type', 'account', '--key', 'k', '--label', 'L'];
  const cases: [string[], string][] = [
    [
      [...add, '--relationship', '--cardinality', 'has_one', '--target', 'contact', '--unique'],
      'rolodex definition: --unique is not an option of "definition add --relationship"',
    ],
    [
      [...add, '--relationship', '--cardinality', 'has_one', '--target', 'contact', '--value-type', 'TEXT'],
      'rolodex definition: --value-type is not an option of "definition add --relationship"',
    ],
    [
      [...add, '--value-type', 'TEXT', '--cardinality', 'has_one', '--target', 'contact'],
      'rolodex definition: --cardinality is not an option of "definition add" (a relationship is added with --relationship)',
    ],
    [
      ['definition', 'option', 'add', ...w, '--type', 'account', '--field', 'tier', '--label', 'Gold', '--key', 'tier'],
      'rolodex definition: --key is not an option of "definition option add"',
    ],
    [
      ['definition', 'archive', ...w, '--type', 'account', '--key', 'tier', '--label', 'Tier'],
      'rolodex definition: --label is not an option of "definition archive"',
    ],
    [['definition', 'types', ...w, '--type', 'account'], 'rolodex definition: --type is not an option of "definition types"'],
    [
      ['definition', 'type', 'add', ...w, '--slug', 'project', '--label', 'Project', '--type', 'x'],
      'rolodex definition: --type is not an option of "definition type add"',
    ],
  ];
  for (const [args, line] of cases) assert.equal(await usage(args), line, args.join(' '));
});

test('an option the subcommand does not take is wrong usage in every command, nothing done', async () => {
  const w = ['--workspace', 'ws_x'];
  const cases: [string[], string][] = [
    [['workspace', 'create', '--name', 'Acme', '--default-country', 'DE'], 'rolodex workspace: --default-country is not an option of "workspace create"'],
    [['workspace', 'list', ...w], 'rolodex workspace: --workspace is not an option of "workspace list"'],
    [['key', 'list', ...w, '--scopes', 'lists:read'], 'rolodex key: --scopes is not an option of "key list"'],
    [['key', 'revoke', 'key_x', ...w], 'rolodex key: --workspace is not an option of "key revoke"'],
    [['user', 'list', ...w, '--role', 'admin'], 'rolodex user: --role is not an option of "user list"'],
    [['channel', 'list', ...w, '--name', 'general'], 'rolodex channel: --name is not an option of "channel list"'],
    [['mailbox', 'list', ...w, '--user', 'u'], 'rolodex mailbox: --user is not an option of "mailbox list"'],
    [['webhook', 'remove', 'wh_x', '--url', 'https://x.test'], 'rolodex webhook: --url is not an option of "webhook remove"'],
    [['trash', 'restore', ...w, '--older-than', '30d', 'rec_x'], 'rolodex trash: --older-than is not an option of "trash restore"'],
  ];
  for (const [args, line] of cases) assert.equal(await usage(args), line, args.join(' '));
});
