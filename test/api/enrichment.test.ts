// Enrichment runs (docs/enrichment.md) against a local test site, on both databases: the answers
// of the POST (started, already_running, skipped with its reasons), the fields a run fills (the
// social profiles, a workspace's own description and logo; only empty ones unless named), a
// contact's account from its e-mail domain, robots.txt, scopes and workspaces, runs left by a
// dead process, timeouts, on-create runs (recorded by the runner from the change log), and private
// addresses refused unless ENRICH_ALLOW_PRIVATE=true.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { executeRun } from '../../src/enrichment/execute.ts';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { PROVIDERS } from '../../src/enrichment/providers.ts';
import { claimRuns } from '../../src/enrichment/outcome.ts';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { EnrichmentRunner } from '../../src/jobs/enrichment.ts';
import { startTestRunner, settled } from '../helpers/enrichment.ts';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';

const PAGE = `<!doctype html><html><head><title> Acme &amp; Co </title>
<meta name="description" content="We make anvils.">
<link rel="apple-touch-icon" href="/logo.png"></head><body>
<a href="https://www.linkedin.com/company/acme-anvils/">LinkedIn</a>
<a href="https://twitter.com/share?url=x">share</a><a href="https://x.com/acmeanvils">X</a>
<a href="https://facebook.com/acmeanvils">fb</a><a href="https://www.instagram.com/acme.anvils">ig</a>
<!-- <a href="https://www.linkedin.com/company/not-this">commented out</a> --></body></html>`;

/** The test site: a home page with every fact; reached as `localhost`, its robots.txt disallows the provider. */
async function testSite(): Promise<{ base: string; server: Server; userAgents: string[] }> {
  const userAgents: string[] = [];
  const server = createServer((req, res) => {
    userAgents.push(String(req.headers['user-agent']));
    const url = req.url ?? '/';
    if (url === '/robots.txt') {
      const blocked = req.headers.host?.startsWith('localhost');
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(blocked ? 'User-agent: RolodexEnrichment\nDisallow: /\n' : 'User-agent: *\nDisallow: /private\n');
      return;
    }
    if (url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, userAgents };
}

function runner(t: TestApp): EnrichmentRunner {
  return startTestRunner(t, PROVIDERS, { userAgent: 'RolodexEnrichment/1.0 (+test)' });
}

/** `rolodex …` against the test app's database; its JSON output. */
async function cli(t: TestApp, ...args: string[]): Promise<any> {
  const out: string[] = [];
  const err: string[] = [];
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  const io: Io = { out: (x) => out.push(x), err: (x) => err.push(x), env, isTty: false };
  assert.equal(await main(args, io), 0, `${args.join(' ')}: ${err.join('')}`);
  return JSON.parse(out.join(''));
}

const fieldValues = (entity: any) => Object.fromEntries(Object.entries(entity.fields).map(([k, v]: [string, any]) => [k, v.value]));

let site: Awaited<ReturnType<typeof testSite>>;
before(async () => {
  site = await testSite();
});
after(() => {
  site.server.closeAllConnections();
  site.server.close();
});

eachDialect(
  'enrichment',
  (ctx) => {
    let r: EnrichmentRunner;
    before(() => {
      r = runner(ctx());
    });
    after(() => r.stop());

    test('a run on an account fills its empty social fields from the home page and answers the documented shapes', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (
        await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: [site.base], $facebook: 'https://facebook.com/keepme' } })
      ).json();
      const res = await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.status, 'started');
      assert.equal(body.reason, null);
      const run = body.enrichmentRun;
      assert.match(run.id, /^enr_[0-9a-z]{26}$/);
      assert.deepEqual(Object.keys(run).sort(), [
        'completedAt',
        'createdAt',
        'entityId',
        'entityType',
        'id',
        'startedAt',
        'status',
        'targetFields',
        'trigger',
        'updatedAt',
      ]);
      assert.equal(run.entityType, 'account');
      assert.equal(run.trigger, 'manual');
      assert.deepEqual(run.targetFields, ['$linkedIn', '$twitter', '$instagram']);
      const done = await settled(t, s.secret, run.id);
      assert.equal(done.status, 'completed');
      assert.ok(done.startedAt && done.completedAt);
      const after = fieldValues((await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json());
      assert.equal(after.$name, 'Acme', 'the name is not replaced unless named');
      assert.match(String(after.$linkedIn), /linkedin\.com\/company\/acme-anvils$/);
      assert.match(String(after.$twitter), /acmeanvils$/);
      assert.match(String(after.$instagram), /acme\.anvils$/);
      assert.match(String(after.$facebook), /keepme$/, 'a field that held a value keeps it');
      assert.ok(site.userAgents.every((ua) => ua.startsWith('RolodexEnrichment/')));
    });

    test("a workspace's own description and logo fields are filled from the page, as documented", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ws = ['--workspace', s.workspaceId, '--type', 'account'];
      await cli(t, 'definition', 'add', ...ws, '--key', 'description', '--label', 'Description', '--value-type', 'TEXT', '--json');
      await cli(t, 'definition', 'add', ...ws, '--key', 'logo', '--label', 'Logo', '--value-type', 'URL', '--json');
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: [site.base] } })).json();
      const run = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
      assert.deepEqual(run.enrichmentRun.targetFields, ['$linkedIn', '$twitter', '$facebook', '$instagram', 'description', 'logo']);
      assert.equal((await settled(t, s.secret, run.enrichmentRun.id)).status, 'completed');
      const after = fieldValues((await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json());
      assert.equal(after.description, 'We make anvils.');
      assert.equal(after.logo, `${site.base}/logo.png`);
      assert.match(String(after.$facebook), /facebook\.com\/acmeanvils$/);
    });

    test('named fields are filled even when set; a second request while one is in flight answers already_running', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (
        await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Old name', $website: [site.base], $twitter: 'https://twitter.com/old' } })
      ).json();
      await r.stop();
      let first: any;
      try {
        first = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`, { fields: ['$twitter', '$name'] })).json();
        assert.equal(first.status, 'started');
        assert.equal(first.enrichmentRun.status, 'queued');
        assert.equal(first.enrichmentRun.startedAt, null);
        const second = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
        assert.equal(second.status, 'already_running');
        assert.equal(second.enrichmentRun.id, first.enrichmentRun.id);
      } finally {
        r = runner(t);
      }
      assert.equal((await settled(t, s.secret, first.enrichmentRun.id)).status, 'completed');
      const after = fieldValues((await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json());
      assert.equal(after.$name, 'Acme & Co');
      assert.match(String(after.$twitter), /acmeanvils$/);
      const bad = await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`, { fields: ['$industry'] });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.code, 'invalid_value');
      // param is the path of the name refused, its index in the array sent (docs/errors.md).
      assert.equal(bad.json().error.param, 'fields[0]');
      const third = await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`, { fields: ['$name', '$name', '$industry'] });
      assert.equal(third.statusCode, 400);
      assert.equal(third.json().error.param, 'fields[2]');
      // An optional body is absent or an object: null is not an absent body (docs/errors.md §Request bodies).
      const nul = await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`, null);
      assert.equal(nul.statusCode, 400);
      assert.equal(nul.json().error.code, 'invalid_type');
    });

    test('skipped: no_operations without a website or e-mail domain, no_targets when nothing is empty; 404 for a missing record', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const bare = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'No site' } })).json();
      assert.deepEqual((await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${bare.id}`)).json(), {
        enrichmentRun: null,
        status: 'skipped',
        reason: 'no_operations',
      });
      const full = (
        await call(t, s.secret, 'POST', '/v1/accounts', {
          fields: { $name: 'Full', $website: [site.base], $linkedIn: 'a', $twitter: 'b', $facebook: 'c', $instagram: 'd' },
        })
      ).json();
      assert.deepEqual((await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${full.id}`)).json(), {
        enrichmentRun: null,
        status: 'skipped',
        reason: 'no_targets',
      });
      const nobody = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'No', lastName: 'Mail' } } })).json();
      assert.equal((await call(t, s.secret, 'POST', `/v1/enrichmentRun/contacts/${nobody.id}`)).json().reason, 'no_operations');
      const missing = await call(t, s.secret, 'POST', '/v1/enrichmentRun/accounts/acc_01aaaaaaaaaaaaaaaaaaaaaaaa');
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().error.code, 'resource_not_found');
      // param names the path parameter that carried the id (docs/errors.md).
      assert.equal(missing.json().error.param, 'entityId');
      const noRun = await call(t, s.secret, 'GET', '/v1/enrichmentRun/enr_01aaaaaaaaaaaaaaaaaaaaaaaa');
      assert.equal(noRun.statusCode, 404);
      assert.equal(noRun.json().error.param, 'runId');
      assert.equal((await call(t, s.secret, 'POST', `/v1/enrichmentRun/contacts/${bare.id}`)).statusCode, 404, 'an account id is no contact');
    });

    test("a contact's account is the one whose website matches its e-mail domain, when none is set", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Decoy', $website: ['https://notacme.test'] } });
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: ['https://www.acme.test/about'] } })).json();
      const con = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $email: ['ana@acme.test'] } })).json();
      const run = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/contacts/${con.id}`)).json();
      assert.deepEqual(run.enrichmentRun.targetFields, ['$account']);
      assert.equal((await settled(t, s.secret, run.enrichmentRun.id)).status, 'completed');
      const got = (await call(t, s.secret, 'GET', `/v1/contacts/${con.id}`)).json();
      assert.deepEqual(got.relationships.$account.values, [acc.id]);
      assert.equal((await call(t, s.secret, 'POST', `/v1/enrichmentRun/contacts/${con.id}`)).json().reason, 'no_targets');
    });

    test('robots.txt that disallows the provider: the run completes and fills nothing', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (
        await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Shy', $website: [site.base.replace('127.0.0.1', 'localhost')] } })
      ).json();
      const run = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
      assert.equal((await settled(t, s.secret, run.enrichmentRun.id)).status, 'completed');
      assert.equal((await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json().fields.$linkedIn.value, null);
    });

    test('robots.txt that cannot be reached: the run fails without fetching the page', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      // RFC 9309: an unreachable robots.txt (the connection drops) disallows everything.
      const pages: string[] = [];
      const down = createServer((req, res) => {
        if (req.url === '/robots.txt') return void req.socket.destroy();
        pages.push(req.url ?? '/');
        res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      });
      await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
      try {
        const website = `http://127.0.0.1:${(down.address() as AddressInfo).port}`;
        const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Down', $website: [website] } })).json();
        const run = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json();
        assert.equal((await settled(t, s.secret, run.enrichmentRun.id)).status, 'failed');
        assert.deepEqual(pages, []);
        assert.equal((await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json().fields.$linkedIn.value, null);
      } finally {
        down.closeAllConnections();
        down.close();
      }
    });

    test("scopes per record type; another workspace's run is 404", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Scoped', $website: [site.base] } })).json();
      const readOnly = await keyFor(t, s.workspaceId, s.userId, ['accounts:read', 'contacts:update']);
      assert.equal((await call(t, readOnly, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json().error.code, 'insufficient_scope');
      const run = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json().enrichmentRun;
      assert.equal((await call(t, readOnly, 'GET', `/v1/enrichmentRun/${run.id}`)).statusCode, 200);
      const contactsOnly = await keyFor(t, s.workspaceId, s.userId, ['contacts:read']);
      const refused = await call(t, contactsOnly, 'GET', `/v1/enrichmentRun/${run.id}`);
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().error.code, 'insufficient_scope');
      // A key with neither read scope is refused alike for a run that exists and an id that names
      // none: its answer never tells which runs exist.
      const neither = await keyFor(t, s.workspaceId, s.userId, ['accounts:update', 'contacts:update']);
      const answer = async (id: string) => {
        const res = await call(t, neither, 'GET', `/v1/enrichmentRun/${id}`);
        return { status: res.statusCode, code: res.json().error.code as string, message: res.json().error.message as string };
      };
      const existing = await answer(run.id);
      const absent = await answer(`enr_${'0'.repeat(26)}`);
      assert.deepEqual([existing.status, existing.code], [403, 'insufficient_scope']);
      assert.deepEqual(absent, existing);
      assert.match(existing.message, /accounts:read and contacts:read/);
      // One read scope: an unknown id is answered as the run of the other type is.
      const unknown = await call(t, contactsOnly, 'GET', `/v1/enrichmentRun/enr_${'0'.repeat(26)}`);
      assert.deepEqual([unknown.statusCode, unknown.json().error.message], [403, refused.json().error.message]);
      const both = await keyFor(t, s.workspaceId, s.userId, ['accounts:read', 'contacts:read']);
      assert.equal((await call(t, both, 'GET', `/v1/enrichmentRun/enr_${'0'.repeat(26)}`)).statusCode, 404, 'both read scopes: an unknown id is 404');
      const other = await seedWorkspace(t);
      assert.equal((await call(t, other.secret, 'GET', `/v1/enrichmentRun/${run.id}`)).statusCode, 404);
      assert.equal((await call(t, other.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).statusCode, 404);
      await settled(t, s.secret, run.id);
    });

    test('a run whose lookups outlast its timeout ends timed_out and writes nothing', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Slow', $website: [site.base] } })).json();
      const db = t.deps.db.kysely;
      await r.stop();
      let runId = '';
      try {
        runId = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json().enrichmentRun.id;
        const rows = await claimRuns(db, { token: 'test-token', leaseMs: 60_000, limit: 100, maxAttempts: 3, at: new Date().toISOString() });
        const row = rows.find((x) => x.id === runId);
        assert.ok(row);
        const hanging: EnrichmentProvider = { name: 'hang', fills: () => ['$linkedIn'], canLookUp: () => true, lookUp: () => new Promise(() => {}) };
        const env = { providers: [hanging], userAgent: 'RolodexEnrichment/1.0 (+test)', allowPrivate: true, timeoutMs: 150 };
        assert.equal(await executeRun(db, row, 'test-token', env), 'timed_out');
      } finally {
        r = runner(t);
      }
      const run = (await call(t, s.secret, 'GET', `/v1/enrichmentRun/${runId}`)).json();
      assert.equal(run.status, 'timed_out');
      assert.ok(run.completedAt);
      assert.equal((await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json().fields.$linkedIn.value, null);
    });

    test('a run left running by a dead process is retried; past its attempts it is failed', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Orphan', $website: [site.base] } })).json();
      const run = (await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json().enrichmentRun;
      await settled(t, s.secret, run.id);
      const db = t.deps.db.kysely;
      const past = '2000-01-01T00:00:00.000Z';
      await db
        .updateTable('enrichment_runs')
        .set({ status: 'running', lease_owner: 'dead', due_at: past, attempts: 1, completed_at: null })
        .where('id', '=', run.id)
        .execute();
      assert.equal((await settled(t, s.secret, run.id)).status, 'completed');
      await db
        .updateTable('enrichment_runs')
        .set({ status: 'running', lease_owner: 'dead', due_at: past, attempts: 3, completed_at: null })
        .where('id', '=', run.id)
        .execute();
      assert.equal((await settled(t, s.secret, run.id)).status, 'failed');
    });
  },
  { env: { ENRICH_ALLOW_PRIVATE: 'true', ENRICH_POLL_MS: '20' } },
);

eachDialect(
  'enrichment on-create, private addresses refused',
  (ctx) => {
    let r: EnrichmentRunner;
    before(() => {
      r = runner(ctx());
    });
    after(() => r.stop());

    test('on-create: the runner records a run with trigger creation; a private target fails the run', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Local', $website: [site.base] } })).json();
      const runOf = (id: string) => t.deps.db.kysely.selectFrom('enrichment_runs').selectAll().where('entity_id', '=', id).executeTakeFirst();
      // Recorded from the change log once the log's end settles (src/db/log-end.ts).
      for (let i = 0; i < 3000 && !(await runOf(acc.id)); i++) await sleep(10);
      const row = await runOf(acc.id);
      assert.ok(row, 'the run was recorded');
      assert.equal(row.trigger, 'creation');
      const done = await settled(t, s.secret, row.id);
      assert.equal(done.status, 'failed', 'a loopback address is refused without ENRICH_ALLOW_PRIVATE');
      assert.equal(done.trigger, 'creation');
      assert.equal((await call(t, s.secret, 'GET', `/v1/accounts/${acc.id}`)).json().fields.$linkedIn.value, null);
      const plain = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'No site' } })).json();
      const later = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Later', $website: [site.base] } })).json();
      for (let i = 0; i < 3000 && !(await runOf(later.id)); i++) await sleep(10);
      assert.equal(await runOf(plain.id), undefined, 'an account without a website gets no run');
    });
  },
  { env: { ENRICHMENT: 'on-create', ENRICH_POLL_MS: '20' } },
);

eachDialect(
  'enrichment off',
  (ctx) => {
    test('ENRICHMENT=off: a request starts no run and answers skipped, no_operations', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Off', $website: [site.base] } })).json();
      assert.deepEqual((await call(t, s.secret, 'POST', `/v1/enrichmentRun/accounts/${acc.id}`)).json(), {
        enrichmentRun: null,
        status: 'skipped',
        reason: 'no_operations',
      });
      assert.equal(await t.deps.db.kysely.selectFrom('enrichment_runs').select('id').executeTakeFirst(), undefined);
    });
  },
  { env: { ENRICHMENT: 'off' } },
);
