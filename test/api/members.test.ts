// Members (docs/design.md §Members) on both databases: the closed member resource validated
// against our own OpenAPI document, names split and kept as parts, profile images, pagination and
// totalCount from the ranked index, 404 for ids of other workspaces, and how operators make users
// (CLI, import).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { sql } from 'kysely';
import { partitionKey } from '../../src/db/rank/index.ts';
import { USERS } from '../../src/users/repository.ts';
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createUser } from '../../src/users/service.ts';
import { call, eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { loadDocument, type Operation, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';
import { importObjects } from '../helpers/lists-fixtures.ts';
import { checkEntries, checkPages, useRankSizes } from '../helpers/rank.ts';

async function cli(t: TestApp, ...args: string[]): Promise<{ code: number; json(): any; err: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  const io: Io = { out: (s) => stdout.push(s), err: (s) => stderr.push(s), env, isTty: false };
  const code = await main(args, io);
  return { code, json: () => JSON.parse(stdout.join('')), err: stderr.join('') };
}

eachDialect(
  'members',
  (ctx) => {
    // Small buckets, so that a few dozen users already make several leaves (docs/pages.md).
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let ops: Map<string, Operation>;
    const checker = responseChecker();
    before(async () => {
      ops = new Map(operationsOf(await loadDocument(ctx())).map((o) => [o.operationId, o]));
    });

    /** GETs and checks the answer against the served OpenAPI document. */
    async function get(t: TestApp, secret: string, operationId: string, url: string) {
      const res = await call(t, secret, 'GET', url);
      const why = checker.check(ops.get(operationId)!, res);
      assert.equal(why, null, `${url}: ${why}`);
      return res;
    }

    test('the member resource: closed, the four fields always present, names as known parts, no externalId', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ws = s.workspaceId;
      const made = {
        split: await cli(t, 'user', 'create', '--workspace', ws, '--email', 'ann@acme.test', '--name', '  Ann  Marie Smith ', '--json'),
        single: await cli(t, 'user', 'create', '--workspace', ws, '--email', 'cher@acme.test', '--name', 'Cher', '--json'),
        parts: await cli(
          t,
          'user',
          'create',
          '--workspace',
          ws,
          '--email',
          'bo@acme.test',
          '--first-name',
          'Bo',
          '--last-name',
          'van der Berg',
          '--role',
          'admin',
          '--json',
        ),
        lastOnly: await cli(
          t,
          'user',
          'create',
          '--workspace',
          ws,
          '--email',
          'x@acme.test',
          '--last-name',
          'Xu',
          '--profile-image',
          'https://img.example/x.png',
          '--json',
        ),
        none: await cli(t, 'user', 'create', '--workspace', ws, '--email', 'none@acme.test', '--json'),
      };
      for (const [k, r] of Object.entries(made)) assert.equal(r.code, 0, `${k}: ${r.err}`);
      const expected: Record<string, unknown> = {
        split: { firstName: 'Ann', lastName: 'Marie Smith' },
        single: { firstName: 'Cher' },
        parts: { firstName: 'Bo', lastName: 'van der Berg' },
        lastOnly: { lastName: 'Xu' },
        none: {},
      };
      for (const [k, r] of Object.entries(made)) {
        const user = r.json();
        const res = await get(t, s.secret, 'getMember', `/v1/members/${user.id}`);
        assert.equal(res.statusCode, 200);
        const m = res.json();
        assert.deepEqual(Object.keys(m).sort(), ['createdAt', 'fields', 'httpLink', 'id', 'relationships', 'updatedAt']);
        assert.equal(m.id, user.id);
        assert.equal(m.createdAt, user.createdAt);
        assert.equal(m.updatedAt, user.createdAt);
        assert.equal(m.httpLink, `https://app.rolodex.test/members/${user.id}`);
        assert.deepEqual(m.relationships, {});
        assert.deepEqual(m.fields.$name, { value: expected[k], valueType: 'FULL_NAME' }, k);
        assert.deepEqual(m.fields.$email, { value: user.email, valueType: 'EMAIL' });
        assert.deepEqual(m.fields.$role, { value: k === 'parts' ? 'admin' : 'member', valueType: 'TEXT' });
        assert.deepEqual(m.fields.$profileImage, { value: k === 'lastOnly' ? 'https://img.example/x.png' : null, valueType: 'URL' });
      }
      // The CLI's own answer carries the parts too.
      assert.equal(made.split.json().firstName, 'Ann');
      assert.equal(made.split.json().lastName, 'Marie Smith');
    });

    test('import: name (split) or firstName/lastName, profileImageUrl; a re-import updates; no externalId is shown', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const r = await importObjects(t, s.workspaceId, [
        { object: 'user', externalId: 'u-j', email: 'jean@acme.test', name: 'Jean  Luc Picard', profileImageUrl: 'http://img.example/j.jpg' },
        { object: 'user', externalId: 'u-k', email: 'kim@acme.test', firstName: 'Kim', lastName: 'Lee', role: 'admin' },
      ]);
      const jean = r.ids.user!['u-j']!;
      const kim = r.ids.user!['u-k']!;
      const j = (await get(t, s.secret, 'getMember', `/v1/members/${jean}`)).json();
      assert.deepEqual(j.fields.$name.value, { firstName: 'Jean', lastName: 'Luc Picard' });
      assert.equal(j.fields.$profileImage.value, 'http://img.example/j.jpg');
      assert.ok(!JSON.stringify(j).includes('u-j'), 'no externalId');
      const k = (await get(t, s.secret, 'getMember', `/v1/members/${kim}`)).json();
      assert.deepEqual(k.fields.$name.value, { firstName: 'Kim', lastName: 'Lee' });
      assert.equal(k.fields.$role.value, 'admin');
      await new Promise((resolve) => setTimeout(resolve, 5));
      await importObjects(t, s.workspaceId, [{ object: 'user', externalId: 'u-k', email: 'kim@acme.test', firstName: 'Kimberly', role: 'member' }]);
      const k2 = (await get(t, s.secret, 'getMember', `/v1/members/${kim}`)).json();
      assert.deepEqual(k2.fields.$name.value, { firstName: 'Kimberly' });
      assert.equal(k2.fields.$role.value, 'member');
      assert.equal(k2.createdAt, k.createdAt);
      assert.ok(k2.updatedAt > k.updatedAt, 'updatedAt moved');
      assert.equal((await get(t, s.secret, 'listMembers', '/v1/members')).json().totalCount, 3, 'a re-import adds no member');
    });

    test('bad names and profile images are refused by the CLI and the import, naming the field', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const ws = s.workspaceId;
      const refused: Array<[string[], number, RegExp]> = [
        [['--name', 'A B', '--first-name', 'A'], 2, /either --name or --first-name/],
        [['--profile-image', 'ftp://img.example/a.png'], 1, /profile image must be an absolute http or https URL/],
        [['--profile-image', 'not a url'], 1, /profile image/],
        [['--first-name', 'x'.repeat(256)], 1, /first name must be at most 255/],
        [['--name', `Ann ${'y'.repeat(256)}`], 1, /last name must be at most 255/],
      ];
      for (const [args, code, why] of refused) {
        const r = await cli(t, 'user', 'create', '--workspace', ws, '--email', 'r@acme.test', ...args);
        assert.equal(r.code, code, `${args.join(' ')}: ${r.err}`);
        assert.match(r.err, why);
      }
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ name: 'A B', firstName: 'A' }, 'name'],
        [{ profileImageUrl: 'javascript:alert(1)' }, 'profileImageUrl'],
        [{ profileImageUrl: 42 }, 'profileImageUrl'],
        [{ lastName: 'z'.repeat(256) }, 'lastName'],
        [{ firstName: ['A'] }, 'firstName'],
      ];
      for (const [extra, field] of bad) {
        await assert.rejects(
          importObjects(t, ws, [{ object: 'user', externalId: 'bad', email: 'b@acme.test', ...extra }]),
          (err: { errors?: Array<{ field: string }> }) => err.errors?.[0]?.field === field,
          JSON.stringify(extra),
        );
      }
      assert.equal((await get(t, s.secret, 'listMembers', '/v1/members')).json().totalCount, 1, 'nothing was made');
    });

    test('list: newest first with ties by id, pages that add up at any offset, an exact totalCount of this workspace only', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const other = await seedWorkspace(t);
      // One import: 29 users made at the same instant, so the order among them is by id alone.
      await importObjects(
        t,
        s.workspaceId,
        Array.from({ length: 29 }, (_, i) => ({ object: 'user', externalId: `u${i}`, email: `u${i}@acme.test`, firstName: `U${i}` })),
      );
      await createUser(operatorCtx(t.deps.db.kysely, other.workspaceId), { email: 'elsewhere@other.test' });
      const all = await t.deps.db.kysely.selectFrom('users').select(['id', 'created_at']).where('workspace_id', '=', s.workspaceId).execute();
      const order = all.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1)).map((u) => u.id);
      assert.equal(order.length, 30);
      const first = (await get(t, s.secret, 'listMembers', '/v1/members')).json();
      assert.equal(first.object, 'list');
      assert.equal(first.totalCount, 30);
      assert.deepEqual(
        first.data.map((m: { id: string }) => m.id),
        order.slice(0, 25),
      );
      for (const [limit, offset] of [
        [25, 25],
        [7, 0],
        [7, 14],
        [7, 21],
        [1, 29],
        [25, 16],
        [3, 28],
      ] as const) {
        const page = (await get(t, s.secret, 'listMembers', `/v1/members?limit=${limit}&offset=${offset}`)).json();
        assert.equal(page.totalCount, 30);
        assert.deepEqual(
          page.data.map((m: { id: string }) => m.id),
          order.slice(offset, offset + limit),
          `limit ${limit} offset ${offset}`,
        );
      }
      const past = (await get(t, s.secret, 'listMembers', '/v1/members?offset=30')).json();
      assert.deepEqual(past, { data: [], object: 'list', totalCount: 30 });
      const theirs = (await get(t, other.secret, 'listMembers', '/v1/members')).json();
      assert.equal(theirs.totalCount, 2);
      assert.ok(!theirs.data.some((m: { id: string }) => order.includes(m.id)));
    });

    test('totalCount and every page come from the ranked index, which every way of making a user keeps', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      await cli(t, 'user', 'create', '--workspace', s.workspaceId, '--email', 'c1@acme.test');
      await importObjects(
        t,
        s.workspaceId,
        Array.from({ length: 20 }, (_, i) => ({ object: 'user', externalId: `r${i}`, email: `r${i}@acme.test` })),
      );
      await createUser(operatorCtx(t.deps.db.kysely, s.workspaceId), { email: 'c2@acme.test' });
      const db = t.deps.db.kysely;
      const kept = await db.selectFrom('workspace_user_counts').select('user_count').where('workspace_id', '=', s.workspaceId).executeTakeFirst();
      assert.equal(Number(kept?.user_count), 23, 'every way of making a user counts it');
      const shape = await checkEntries(db, USERS, [s.workspaceId]);
      assert.equal(shape.total, 23);
      assert.ok((shape.entries[0] ?? 0) > 2, `several leaves: ${shape.entries.join(',')}`);
      await checkPages(db, USERS, [s.workspaceId], { limit: 4 });
      // Tampered with (five rows more in the oldest entry of every level), the index shows through:
      // the answer reads it rather than counting rows.
      await sql`update rank_buckets set n = n + 5 where scope = ${partitionKey(USERS, [s.workspaceId])} and lo_ts = ''`.execute(db);
      assert.equal((await call(t, s.secret, 'GET', '/v1/members')).json().totalCount, 28);
    });

    test('query parameters besides limit and offset, and bad limits, are 400 invalid_parameter', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      for (const [qs, param] of [
        ['email=ann@acme.test', 'email'],
        ['role=admin', 'role'],
        ['limit=26', 'limit'],
        ['limit=0', 'limit'],
        ['offset=-1', 'offset'],
        ['limit=ten', 'limit'],
      ]) {
        const res = await get(t, s.secret, 'listMembers', `/v1/members?${qs}`);
        assert.equal(res.statusCode, 400, qs);
        assert.equal(res.json().error.code, 'invalid_parameter', qs);
        assert.equal(res.json().error.param, param, qs);
      }
    });

    test("an unknown id or another workspace's member is 404, exactly alike; members:read is needed", async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const other = await seedWorkspace(t);
      const foreign = await get(t, s.secret, 'getMember', `/v1/members/${other.userId}`);
      const random = await get(t, s.secret, 'getMember', '/v1/members/usr_01jzzzzzzzzzzzzzzzzzzzzzzz');
      assert.equal(foreign.statusCode, 404);
      assert.equal(foreign.json().error.code, 'resource_not_found');
      const normal = (res: typeof foreign, id: string) =>
        res.body
          .split(id)
          .join('<ID>')
          .replace(/req_[0-9a-z]{26}/g, '<REQ>');
      assert.equal(normal(foreign, other.userId), normal(random, 'usr_01jzzzzzzzzzzzzzzzzzzzzzzz'));
      const lists = await keyFor(t, s.workspaceId, s.userId, ['lists:read']);
      for (const url of ['/v1/members', `/v1/members/${s.userId}`]) {
        const res = await call(t, lists, 'GET', url);
        assert.equal(res.statusCode, 403);
        assert.match(res.json().error.message, /members:read/);
      }
      const members = await keyFor(t, s.workspaceId, null, ['members:read']);
      assert.equal((await get(t, members, 'getMember', `/v1/members/${s.userId}`)).statusCode, 200);
      assert.equal((await get(t, members, 'listMembers', '/v1/members')).json().totalCount, 1);
    });
  },
  { env: { PUBLIC_APP_URL: 'https://app.rolodex.test' } },
);
