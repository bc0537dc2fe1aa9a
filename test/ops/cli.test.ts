// The operator CLI on both databases: workspaces, users and keys, --json output, and clear
// refusals with the documented exit codes (1 refused, 2 wrong usage).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import type { Io } from '../../src/cli/io.ts';
import { openDb } from '../../src/db/database.ts';
import { loadDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { CLI } from '../helpers/process.ts';

function captureIo(env: Record<string, string>): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, isTty: false, stdout, stderr };
}

for (const dialect of testDialects()) {
  describe(`cli [${dialect}]`, () => {
    let tdb: TestDb;
    let env: Record<string, string>;
    before(async () => {
      tdb = await createTestDb(dialect);
      env = { DATA_DIR: tdb.dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}) };
    });
    after(async () => tdb.drop());

    async function rolodex(...args: string[]) {
      const io = captureIo(env);
      const code = await main(args, io);
      return { code, io, json: () => JSON.parse(io.stdout.join('')) };
    }

    test('workspace, user and key creation print JSON that works together', async () => {
      const ws = await rolodex('workspace', 'create', '--name', 'Acme', '--json');
      assert.equal(ws.code, 0, ws.io.stderr.join(''));
      assert.match(ws.json().id, /^ws_/);
      assert.equal(ws.json().name, 'Acme');
      const user = await rolodex('user', 'create', '--workspace', ws.json().id, '--email', 'Ann@Acme.test', '--role', 'admin', '--json');
      assert.equal(user.code, 0, user.io.stderr.join(''));
      assert.equal(user.json().email, 'ann@acme.test');
      assert.equal(user.json().role, 'admin');
      const key = await rolodex('key', 'create', '--workspace', ws.json().id, '--user', user.json().id, '--scopes', 'lists:read,files:read', '--json');
      assert.equal(key.code, 0, key.io.stderr.join(''));
      assert.deepEqual(Object.keys(key.json()).sort(), ['expiresAt', 'id', 'scopes', 'secret', 'subjectType']);
      assert.equal(key.json().subjectType, 'user');
      assert.deepEqual(key.json().scopes, ['lists:read', 'files:read']);
      assert.match(key.json().secret, /^rdx_/);
      const wsKey = await rolodex('key', 'create', '--workspace', ws.json().id, '--json');
      assert.equal(wsKey.json().subjectType, 'workspace');
      assert.deepEqual(wsKey.json().scopes, []);

      const list = await rolodex('key', 'list', '--workspace', ws.json().id, '--json');
      assert.equal(list.json().length, 2);
      assert.ok(!JSON.stringify(list.json()).includes(key.json().secret.slice(13)), 'listing never shows a secret');
      const revoked = await rolodex('key', 'revoke', key.json().id, '--json');
      assert.equal(revoked.code, 0);
      assert.ok(revoked.json().revokedAt);
      const workspaces = await rolodex('workspace', 'list', '--json');
      assert.ok(workspaces.json().some((w: { id: string }) => w.id === ws.json().id));
    });

    test('key list shows an expired key as expired, as the server refuses it (docs/cli.md)', async () => {
      const ws = (await rolodex('workspace', 'create', '--name', 'Expiry', '--json')).json().id as string;
      const open = (await rolodex('key', 'create', '--workspace', ws, '--json')).json();
      const later = (await rolodex('key', 'create', '--workspace', ws, '--expires-in', '30d', '--json')).json();
      const gone = (await rolodex('key', 'create', '--workspace', ws, '--expires-in', '1d', '--json')).json();
      const revoked = (await rolodex('key', 'create', '--workspace', ws, '--json')).json();
      assert.equal((await rolodex('key', 'revoke', revoked.id)).code, 0);
      const past = new Date(Date.now() - 60_000).toISOString();
      const db = openDb({ dataDir: tdb.dataDir, ...(tdb.databaseUrl ? { databaseUrl: tdb.databaseUrl } : {}) });
      try {
        await db.kysely.updateTable('api_keys').set({ expires_at: past }).where('id', '=', gone.id).execute();
      } finally {
        await db.close();
      }
      const listed = await rolodex('key', 'list', '--workspace', ws, '--json');
      assert.equal(listed.code, 0, listed.io.stderr.join(''));
      const byId = new Map((listed.json() as { id: string; status: string; expiresAt: string | null }[]).map((k) => [k.id, k]));
      assert.deepEqual(
        [open.id, later.id, gone.id, revoked.id].map((id) => byId.get(id)?.status),
        ['active', 'active', 'expired', 'revoked'],
      );
      assert.equal(byId.get(gone.id)?.expiresAt, past);
      const text = await rolodex('key', 'list', '--workspace', ws);
      const lines = text.io.stdout.join('\n').split('\n');
      const lineOf = (id: string) => lines.find((l) => l.startsWith(id)) ?? '';
      assert.ok(lineOf(gone.id).endsWith(`  expired ${past}`), lineOf(gone.id));
      assert.ok(lineOf(revoked.id).endsWith('  revoked'), lineOf(revoked.id));
      for (const id of [open.id, later.id]) assert.ok(!/expired|revoked/.test(lineOf(id)), lineOf(id));
    });

    test('key create --user names the user as every command does: by id, externalId or email (docs/cli.md)', async () => {
      const ws = (await rolodex('workspace', 'create', '--name', 'Keys by user', '--json')).json().id as string;
      const other = (await rolodex('workspace', 'create', '--name', 'Other', '--json')).json().id as string;
      const ann = (await rolodex('user', 'create', '--workspace', ws, '--email', 'ann@keys.test', '--json')).json().id as string;
      const file = join(tdb.dataDir, 'key-users.ndjson');
      writeFileSync(file, `${JSON.stringify({ object: 'user', externalId: 'u-bob', email: 'bob@keys.test' })}\n`);
      assert.equal((await rolodex('import', '--workspace', ws, file, '--json')).code, 0);
      const bob = (await rolodex('user', 'list', '--workspace', ws, '--json')).json().find((u: { email: string }) => u.email === 'bob@keys.test').id;
      await rolodex('user', 'create', '--workspace', other, '--email', 'cy@keys.test');
      for (const [ref, id] of [
        [ann, ann],
        ['ann@keys.test', ann],
        ['  ANN@Keys.test ', ann],
        ['u-bob', bob],
      ] as const) {
        const key = await rolodex('key', 'create', '--workspace', ws, '--user', ref, '--json');
        assert.equal(key.code, 0, `${ref}: ${key.io.stderr.join('')}`);
        assert.equal(key.json().subjectType, 'user');
        const listed = (await rolodex('key', 'list', '--workspace', ws, '--json')).json().find((k: { id: string }) => k.id === key.json().id);
        assert.equal(listed.userId, id, ref);
        // Without --json too, a user key's line names its user, so that an operator can find and
        // revoke the keys of a user who leaves.
        const text = (await rolodex('key', 'list', '--workspace', ws)).io.stdout.join('\n').split('\n');
        const line = text.find((l) => l.startsWith(key.json().id)) ?? '';
        assert.match(line, new RegExp(`  user ${id}  full access$`), line);
      }
      const workspaceKey = (await rolodex('key', 'create', '--workspace', ws, '--json')).json().id as string;
      const lines = (await rolodex('key', 'list', '--workspace', ws)).io.stdout.join('\n').split('\n');
      assert.match(lines.find((l) => l.startsWith(workspaceKey)) ?? '', / {2}workspace {2}full access$/);
      // A user of another workspace, or nobody, is refused and no key is made.
      const before = (await rolodex('key', 'list', '--workspace', ws, '--json')).json().length;
      for (const ref of ['cy@keys.test', 'nobody@keys.test']) {
        const r = await rolodex('key', 'create', '--workspace', ws, '--user', ref);
        assert.equal(r.code, 1);
        assert.match(r.io.stderr.join(''), new RegExp(`no user "${ref}"`));
      }
      assert.equal((await rolodex('key', 'list', '--workspace', ws, '--json')).json().length, before);
    });

    test('bad input is refused with a clear message and a non-zero exit', async () => {
      const ws = (await rolodex('workspace', 'create', '--name', 'Beta', '--json')).json();
      const cases: Array<[string[], number, RegExp]> = [
        [['key', 'create', '--workspace', ws.id, '--scopes', 'lists:read,root'], 2, /unknown scope "root"/],
        [['key', 'create', '--workspace', ws.id, '--expires-in', 'soon'], 2, /invalid duration/],
        [['key', 'create', '--workspace', ws.id, '--expires-in', '36501d'], 2, /at most 36500 days/],
        [['key', 'create', '--workspace', ws.id, '--expires-in', '99999999999999999999s'], 2, /at most 36500 days/],
        [['key', 'create', '--workspace', 'ws_missing'], 1, /no workspace/],
        [['key', 'create', '--workspace', ws.id, '--user', 'usr_missing'], 1, /no user/],
        [['user', 'create', '--workspace', ws.id, '--email', 'not-an-email'], 1, /invalid email/],
        [['user', 'create', '--workspace', ws.id, '--email', 'x@y.test', '--role', 'owner'], 2, /--role must be admin or member \(got "owner"\)/],
        [['user', 'create', '--workspace', ws.id], 2, /--email is required/],
        [['workspace', 'create'], 2, /--name is required/],
        [['workspace', 'create', '--name', 'x', '--bogus'], 2, /bogus/],
        [['key', 'revoke', 'key_missing'], 1, /no key/],
        [['frobnicate'], 2, /unknown command/],
      ];
      for (const [args, code, message] of cases) {
        const r = await rolodex(...args);
        assert.equal(r.code, code, `${args.join(' ')}: ${r.io.stderr.join('')}`);
        assert.match(r.io.stderr.join(''), message, args.join(' '));
        assert.equal(r.io.stdout.join(''), '', 'nothing on stdout when refused');
      }
      const dup = await rolodex('user', 'create', '--workspace', ws.id, '--email', 'dup@y.test');
      assert.equal(dup.code, 0);
      const again = await rolodex('user', 'create', '--workspace', ws.id, '--email', 'DUP@y.test');
      assert.equal(again.code, 1);
      assert.match(again.io.stderr.join(''), /already exists/);
    });

    test('an argument a command does not take is wrong usage, not ignored: nothing is done', async () => {
      const ws = (await rolodex('workspace', 'create', '--name', 'Strays', '--json')).json();
      const key = (await rolodex('key', 'create', '--workspace', ws.id, '--json')).json();
      const file = `${tdb.dataDir}/strays.ndjson`;
      const cases: string[][] = [
        // A scope without --scopes would make a full-access key; a name left unquoted, a user without it.
        ['key', 'create', '--workspace', ws.id, 'lists:read'],
        ['user', 'create', '--workspace', ws.id, '--email', 'bob@y.test', '--name', 'Bob', 'Smith'],
        ['key', 'revoke', key.id, 'key_other'],
        ['workspace', 'create', '--name', 'Stray', 'Inc'],
        ['import', '--workspace', ws.id, file, `${file}.2`],
        ['export', '--workspace', ws.id, file, `${file}.2`],
        ['demo', 'now'],
      ];
      for (const args of cases) {
        const r = await rolodex(...args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.io.stderr.join('')}`);
        assert.match(r.io.stderr.join(''), new RegExp(`^rolodex ${args[0]}: unexpected argument "${args.at(-1)}" \\(`), args.join(' '));
      }
      const keys = (await rolodex('key', 'list', '--workspace', ws.id, '--json')).json() as { id: string; revokedAt: string | null }[];
      assert.deepEqual(
        keys.map((k) => [k.id, k.revokedAt]),
        [[key.id, null]],
      );
      assert.deepEqual((await rolodex('user', 'list', '--workspace', ws.id, '--json')).json(), []);
      const names = ((await rolodex('workspace', 'list', '--json')).json() as { name: string }[]).map((w) => w.name);
      assert.ok(!names.includes('Stray') && !names.includes('Acme (demo)'), names.join(', '));
      assert.equal((await rolodex('key', 'revoke', key.id)).code, 0, 'the id alone is taken');
    });

    test('stdout that cannot be written (a full disk) is one line on stderr and exit code 1', async () => {
      const ws = (await rolodex('workspace', 'create', '--name', 'Full', '--json')).json();
      const full = openSync('/dev/full', 'w');
      try {
        for (const args of [['workspace', 'list'], ['export', '--workspace', ws.id], ['--version']]) {
          const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', full, 'pipe'], encoding: 'utf8' });
          assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
          assert.equal(r.stderr, `rolodex ${args[0]}: cannot write stdout: ENOSPC: no space left on device, write\n`, args.join(' '));
        }
      } finally {
        closeSync(full);
      }
    });

    test('definition: custom object types, their fields, relationships and options; refusals', async () => {
      const ws = (await rolodex('workspace', 'create', '--name', 'Gamma', '--json')).json();
      const w = ['--workspace', ws.id];
      const type = await rolodex('definition', 'type', 'add', ...w, '--slug', 'project', '--label', 'Projects', '--json');
      assert.equal(type.code, 0, type.io.stderr.join(''));
      assert.deepEqual(type.json(), { objectType: 'project', label: 'Projects' });
      const field = await rolodex(
        'definition',
        'add',
        ...w,
        '--type',
        'project',
        '--key',
        'phase',
        '--label',
        'Phase',
        '--value-type',
        'SINGLE_SELECT',
        '--json',
      );
      assert.equal(field.code, 0, field.io.stderr.join(''));
      assert.match(field.json().id, /^fld_/);
      const option = await rolodex('definition', 'option', 'add', ...w, '--type', 'project', '--field', 'phase', '--label', 'Planning', '--json');
      assert.equal(option.code, 0, option.io.stderr.join(''));
      const rel = await rolodex(
        'definition',
        'add',
        ...w,
        '--relationship',
        '--type',
        'project',
        '--key',
        'client',
        '--label',
        'Client',
        '--target',
        'account',
        '--cardinality',
        'has_one',
        '--json',
      );
      assert.equal(rel.code, 0, rel.io.stderr.join(''));
      assert.equal(rel.json().cardinality, 'has_one');
      const types = await rolodex('definition', 'types', ...w, '--json');
      assert.deepEqual(types.json(), [{ objectType: 'project', label: 'Projects' }]);
      const cases: Array<[string[], number, RegExp]> = [
        [['definition', 'type', 'add', ...w, '--slug', 'account', '--label', 'X'], 1, /system type/],
        [['definition', 'type', 'add', ...w, '--slug', 'Bad Slug', '--label', 'X'], 1, /must match/],
        [['definition', 'type', 'add', ...w, '--slug', 'project', '--label', 'X'], 1, /exists/],
        [['definition', 'add', ...w, '--type', 'note', '--key', 'x', '--label', 'X', '--value-type', 'TEXT'], 1, /no custom fields/],
        [['definition', 'add', ...w, '--type', 'project', '--key', 'x', '--label', 'X', '--value-type', 'WORDS'], 2, /--value-type must be one of ADDRESS, /],
        [
          ['definition', 'add', ...w, '--relationship', '--type', 'project', '--key', 'y', '--label', 'Y', '--cardinality', 'has_many', '--target', 'nothing'],
          1,
          /unknown object type/,
        ],
        [['definition', 'frob', ...w], 2, /unknown subcommand/],
      ];
      for (const [args, code, message] of cases) {
        const r = await rolodex(...args);
        assert.equal(r.code, code, `${args.join(' ')}: ${r.io.stderr.join('')}`);
        assert.match(r.io.stderr.join(''), message, args.join(' '));
      }
    });

    test('default countries of telephone numbers: the workspace set, a field added with one (docs/records.md §Telephone numbers)', async () => {
      const ws = (await rolodex('workspace', 'create', '--name', 'Phones', '--json')).json().id as string;
      const w = ['--workspace', ws, '--type', 'contact', '--value-type', 'TELEPHONE'];
      assert.equal((await rolodex('definition', 'add', ...w, '--key', 'de', '--label', 'DE', '--default-country', 'DE')).code, 0);
      assert.equal((await rolodex('definition', 'add', ...w, '--key', 'any', '--label', 'Any')).code, 0);
      const set = await rolodex('workspace', 'set', '--workspace', ws, '--default-country', 'fr', '--json');
      assert.deepEqual([set.code, set.json()], [0, { workspaceId: ws, defaultCountry: 'FR' }]);
      const db = openDb({ dataDir: tdb.dataDir, ...(tdb.databaseUrl ? { databaseUrl: tdb.databaseUrl } : {}) });
      try {
        const defs = (await loadDefinitions(operatorCtx(db.kysely, ws), { objectType: 'contact' }))!;
        assert.deepEqual([defs.fields.get('de')?.defaultCountry, defs.fields.get('any')?.defaultCountry], ['DE', 'FR']);
      } finally {
        await db.close();
      }
      assert.equal((await rolodex('workspace', 'set', '--workspace', ws, '--default-country', 'none')).code, 0);
      for (const [args, code, message] of [
        [['workspace', 'set', '--workspace', ws, '--default-country', 'XX'], 2, /--default-country must be an ISO 3166-1 alpha-2 country code/],
        [['workspace', 'set', '--workspace', ws], 2, /--default-country is required/],
        [['workspace', 'set', '--workspace', 'ws_nothing', '--default-country', 'DE'], 1, /no workspace/],
        [
          ['definition', 'add', '--workspace', ws, '--type', 'contact', '--key', 'x', '--label', 'X', '--value-type', 'TEXT', '--default-country', 'DE'],
          1,
          /TELEPHONE/,
        ],
      ] as const) {
        const r = await rolodex(...args);
        assert.equal(r.code, code, `${args.join(' ')}: ${r.io.stderr.join('')}`);
        assert.match(r.io.stderr.join(''), message, args.join(' '));
      }
    });
  });
}

test('a wrong configuration value names the variable', async () => {
  const io = captureIo({ DATA_DIR: '/tmp', PORT: 'eighty' });
  assert.equal(await main(['migrate'], io), 1);
  assert.match(io.stderr.join(''), /PORT must be a whole number/);
  const io2 = captureIo({ DATA_DIR: '/tmp', DATABASE_URL: 'mysql://x' });
  assert.equal(await main(['migrate'], io2), 1);
  assert.match(io2.stderr.join(''), /DATABASE_URL must be a URL starting with postgres:/);
  // Under /proc no directory can be made although the parent exists: one line, where Node's
  // recursive mkdir looped for ever.
  const io3 = captureIo({ DATA_DIR: '/proc/rolodex-data/x' });
  assert.equal(await main(['migrate'], io3), 1);
  assert.match(io3.stderr.join(''), /DATA_DIR \/proc\/rolodex-data\/x cannot be created: ENOENT/);
});

test('a DATABASE_URL without a host is refused naming what is missing, one line', async () => {
  // postgres.js took the missing host for localhost, and the refusal that followed named an empty
  // place ("the PostgreSQL database at : is DATABASE_URL right?").
  for (const [value, shown] of [
    ['postgres://', 'postgres://'],
    ['postgres:///rolodex', 'postgres:///rolodex'],
    ['postgresql:///rolodex?password=hunter2', 'postgresql:///rolodex?password=***'],
  ] as const) {
    const io = captureIo({ DATA_DIR: '/tmp', DATABASE_URL: value });
    assert.equal(await main(['workspace', 'list'], io), 1, value);
    assert.deepEqual(io.stderr, [`rolodex workspace: DATABASE_URL names no host (got "${shown}")`], value);
  }
  // A Unix socket's directory as libpq's ?host= is a host: the URL is taken, and where it led is
  // what the refusal names.
  const socket = captureIo({ DATA_DIR: '/tmp', DATABASE_URL: 'postgres:///rolodex?host=/no/such/socket-dir' });
  assert.equal(await main(['workspace', 'list'], socket), 1);
  assert.match(socket.stderr.join(''), /^rolodex workspace: cannot reach the PostgreSQL database at \/no\/such\/socket-dir\/rolodex \(no such socket\)/);
});

test('a refused URL variable is quoted without its password', async () => {
  // The refusal reaches stderr and container logs: the variable and the value's shape, never the
  // credentials it carries, whether the value parses or not (docs/config.md).
  for (const [name, value, secret, shown] of [
    ['DATABASE_URL', 'mysql://rolodex:hunter2-db@db.internal/rolodex', 'hunter2-db', 'mysql://rolodex:***@db.internal/rolodex'],
    ['REDIS_URL', 'redis://:hunter2-redis@redis internal:6379', 'hunter2-redis', 'redis://:***@redis internal:6379'],
    ['SMTP_URL', 'smtp://mailer:hunter2/smtp@mail.example.com:port', 'hunter2/smtp', 'smtp://mailer:***@mail.example.com:port'],
    ['S3_ENDPOINT', 'ftp://minio.internal/?access_key=AKIA&secret_key=hunter2-s3', 'hunter2-s3', 'secret_key=***'],
  ] as const) {
    const io = captureIo({ DATA_DIR: '/tmp', S3_BUCKET: 'b', [name]: value });
    assert.equal(await main(['migrate'], io), 1, name);
    const said = io.stderr.join('');
    assert.match(said, new RegExp(`${name} must be a URL`), name);
    assert.ok(!said.includes(secret), `${name}: ${said}`);
    assert.ok(said.includes(shown), `${name}: ${said}`);
  }
});

test('a signing secret file that is not whole stops the server at start, and S3 credentials given by half any command', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-config-'));
  try {
    // An empty or edited file was read as hexadecimal into an empty or short key, with which
    // anyone could sign upload and download addresses.
    for (const text of ['', 'not hexadecimal\n', 'abcd\n']) {
      writeFileSync(join(dir, 'signing-secret'), text);
      const io = captureIo({ DATA_DIR: dir, PORT: '0' });
      assert.equal(await main(['serve'], io), 1, JSON.stringify(text));
      assert.match(io.stderr.join(''), /^rolodex serve: \S+signing-secret does not hold a signing secret/);
      assert.equal(io.stderr.length, 1);
    }
    // Only what signs or verifies upload and download addresses reads the secret (docs/config.md
    // §Data directory): a command that does not is not stopped by it, and leaves the file as it is.
    const migrate = captureIo({ DATA_DIR: dir });
    assert.equal(await main(['migrate'], migrate), 0, migrate.stderr.join(''));
    assert.equal(readFileSync(join(dir, 'signing-secret'), 'utf8'), 'abcd\n');
    rmSync(join(dir, 'signing-secret'));
    mkdirSync(join(dir, 'signing-secret'));
    const unreadable = captureIo({ DATA_DIR: dir, PORT: '0' });
    assert.equal(await main(['serve'], unreadable), 1);
    assert.match(unreadable.stderr.join(''), /^rolodex serve: \S+signing-secret cannot be read: EISDIR/);
    rmSync(join(dir, 'signing-secret'), { recursive: true });
    // One of the two alone was dropped for the SDK's default chain.
    const half = captureIo({ DATA_DIR: dir, S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'AKIA' });
    assert.equal(await main(['migrate'], half), 1);
    assert.match(half.stderr.join(''), /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
