// `rolodex demo` on both databases: every curl line it prints runs as printed (with curl, through
// a shell, against a live server) and succeeds, and the lines show what README.md says: records
// created and read through the API, a filtered listing, a note, a task and a custom object.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { main } from '../../src/cli/main.ts';
import type { Io } from '../../src/cli/io.ts';
import { call, eachDialect } from '../helpers/app.ts';

const run = promisify(execFile);

eachDialect('rolodex demo', (ctx) => {
  test('every printed curl line works against a live server', async () => {
    const t = ctx();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const stdout: string[] = [];
    const stderr: string[] = [];
    const env = { DATA_DIR: t.tdb.dataDir, PUBLIC_BASE_URL: base, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
    const io: Io = { out: (x) => stdout.push(x), err: (x) => stderr.push(x), env, isTty: false };
    assert.equal(await main(['demo', '--json'], io), 0, stderr.join(''));
    const examples = (JSON.parse(stdout.join('')) as { examples: string[] }).examples;

    const shows = (what: string, re: RegExp) =>
      assert.ok(
        examples.some((l) => re.test(l)),
        `the demo shows ${what}`,
      );
    shows('a contact created through the API', /-X POST .*-d '\{"fields".*' '[^']+\/v1\/contacts'/);
    shows('a contact retrieved', /\/v1\/contacts\/con_[0-9a-z]+'/);
    shows('a filtered listing', /-g .*'[^']+\/v1\/contacts\?\$name\[startsWith\]=/);
    shows('a note created', /-X POST .*\/v1\/notes'/);
    shows('a task created', /-X POST .*\/v1\/tasks'/);
    shows('a custom object created', /-X POST .*\/v1\/objects\/project\/values'/);
    shows('a filtered custom-object listing', /\/v1\/objects\/project\?budget\[greaterThan\]=/);

    // The other examples are `rolodex …` commands (tested with their commands).
    const curls = examples.filter((l) => l.startsWith('curl '));
    assert.ok(curls.length >= 20, `${curls.length} curl lines`);
    for (const line of curls) {
      assert.ok(!line.includes('{key}') && !line.includes('{base}'), line);
      // The line as printed, run by a shell; curl only adds the status code after the body.
      const { stdout: out } = await run('bash', ['-c', line.replace(/^curl /, `curl -S -w '\\n%{http_code}' `)]);
      const status = Number(out.slice(out.lastIndexOf('\n') + 1));
      assert.ok(status >= 200 && status < 300, `${line}\n→ ${out}`);
      JSON.parse(out.slice(0, out.lastIndexOf('\n')));
    }
    const contacts = await run('bash', [
      '-c',
      `curl -s -g -H "Authorization: Bearer ${/Bearer (\S+)"/.exec(examples[0] as string)?.[1]}" -H "Service-Version: 2026-03-01" '${base}/v1/contacts?$email[contains]=lisa@'`,
    ]);
    assert.equal(JSON.parse(contacts.stdout).totalCount, 1, 'the contact the demo line created is there');
  });

  test('the readOnly key reads every resource the other keys read, and writes nothing', async () => {
    const t = ctx();
    const stdout: string[] = [];
    const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
    const io: Io = { out: (x) => stdout.push(x), err: () => {}, env, isTty: false };
    assert.equal(await main(['demo', '--json'], io), 0);
    const { keys } = JSON.parse(stdout.join('')) as { keys: Record<string, { secret: string; scopes: string[] }> };
    const key = keys.readOnly!;
    assert.ok(
      key.scopes.every((s) => s.endsWith(':read')),
      key.scopes.join(),
    );
    for (const path of ['/v1/channels', '/v1/messages', '/v1/notes', '/v1/tasks', '/v1/meetings', '/v1/emails', '/v1/objects', '/v1/lists', '/v1/members']) {
      const res = await call(t, key.secret, 'GET', path);
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
    }
    const write = await call(t, key.secret, 'POST', '/v1/notes', { fields: { $title: 'no' } });
    assert.equal(write.statusCode, 403, write.body);
  });
});
