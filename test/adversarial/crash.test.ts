// Crash consistency (issue 7, part 5): a real server under list creation (with idempotency keys),
// list updates and, when files are served, create → PUT → complete, is killed with SIGKILL at
// seeded random moments. After each restart: every acknowledged write is there, no write is
// half-applied (counters equal the rows, an idempotency key is done exactly when its list exists),
// no COMPLETED file has other bytes than its recorded size and MD5, and SQLite's integrity_check
// says ok. CRASH_POINTS sets the kill points per dialect (default 15, so 30 in all).
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createUser } from '../../src/users/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { type Acked, runWorkload, seeded } from './crash-workload.ts';
import { verifyFiles } from './crash-verify.ts';
import { systemCtx, operatorCtx } from '../../src/lib/context.ts';
import { LIST_MEMBERS, LISTS } from '../../src/lists/repository.ts';
import { checkEntries } from '../helpers/rank.ts';

const POINTS = Number(process.env.CRASH_POINTS ?? 15);
const SEED = Number(process.env.CRASH_SEED ?? 7);
const CLIENTS = 4;

for (const dialect of testDialects()) {
  describe(`crash consistency [${dialect}]`, () => {
    let tdb: TestDb;
    let env: Record<string, string>;
    let secret: string;
    let workspaceId: string;
    let contacts: string[];
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      const ws = await createWorkspace(systemCtx(db), { name: 'Crash' });
      workspaceId = ws.id;
      const user = await createUser(operatorCtx(db, workspaceId), { email: 'crash@example.test', role: 'admin' });
      secret = (await createKey(operatorCtx(db, workspaceId), { userId: user.id, scopes: null, expiresInMs: null })).secret;
      const objects = Array.from({ length: 12 }, (_, i) => ({
        object: 'contact',
        externalId: `c${i}`,
        fields: { $name: { value: { firstName: 'C', lastName: `n${i}` }, valueType: 'FULL_NAME' } },
      }));
      const res = await runImport(operatorCtx(tdb.db.kysely, workspaceId), { kinds: importKinds(), text: objects.map((o) => JSON.stringify(o)).join('\n') });
      contacts = Object.values(res.ids.contact ?? {});
      env = {
        DATA_DIR: tdb.dataDir,
        RATE_LIMIT_READ: '0',
        RATE_LIMIT_WRITE: '0',
        RATE_LIMIT_SEARCH: '0',
        PUBLIC_BASE_URL: 'http://127.0.0.1',
        ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
      };
    });
    after(async () => {
      await tdb.drop();
    });

    test(`${POINTS} SIGKILLs under load lose no acknowledged write and leave nothing half-applied`, async () => {
      const rand = seeded(SEED + (dialect === 'postgres' ? 1000 : 0));
      const acked: Acked = { lists: new Map(), inFlight: [], files: new Map(), requests: 0, touched: new Set() };
      const figures = { kills: 0, inFlight: 0, integrity: 0 };
      let server: ServerProcess = await startServerProcess(env);
      const doc = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      const files = doc.paths['/v1/files'] !== undefined;
      for (let point = 0; point < POINTS; point++) {
        const w = { baseUrl: server.baseUrl, secret, contacts, files, rand, point };
        const stop = { now: false };
        const running = runWorkload(w, CLIENTS, acked, stop);
        // The window starts once the restarted server has acknowledged a write: its first writes
        // may take longer than the window (a loaded machine, PostgreSQL's first connections), and
        // a kill before any answer would check nothing acknowledged.
        const ackedBefore = acked.lists.size;
        for (let i = 0; i < 3000 && acked.lists.size === ackedBefore; i++) await new Promise((r) => setTimeout(r, 10));
        const delay = 150 + Math.floor(rand() * 600);
        await new Promise((r) => setTimeout(r, delay));
        stop.now = true;
        server.child.kill('SIGKILL');
        await server.stop('SIGKILL');
        await running;
        figures.kills++;
        if (tdb.sqliteFile) {
          const raw = new DatabaseSync(tdb.sqliteFile);
          const rows = raw.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>;
          raw.close();
          assert.deepEqual(
            rows.map((r) => r.integrity_check),
            ['ok'],
            `integrity_check after kill ${point}`,
          );
          figures.integrity++;
        }
        server = await startServerProcess(env);
        figures.inFlight += acked.inFlight.length;
        await verify(server, acked);
        acked.inFlight = [];
        acked.touched.clear();
      }
      await server.stop('SIGTERM');
      assert.ok(acked.lists.size >= POINTS, `${acked.lists.size} lists acknowledged in ${POINTS} runs: a run killed before any answer checks nothing`);
      await verifyAllLists(acked);
      const fileCount = files ? await verifyFiles(tdb, workspaceId, acked) : 0;
      console.log(
        `# crash [${dialect}]: ${figures.kills} SIGKILLs (seed ${SEED}), ${acked.requests} writes sent, ${acked.lists.size} lists and ${acked.files.size} files acknowledged, ` +
          `${figures.inFlight} creates in flight at a kill; acknowledged writes lost 0; half-applied 0; COMPLETED files checked ${fileCount}, bad 0; ` +
          `integrity_check ok ${figures.integrity}/${tdb.sqliteFile ? figures.kills : 0}; failures 0`,
      );
    });

    /** At the end, every list ever acknowledged, from the database in two queries. */
    async function verifyAllLists(acked: Acked): Promise<void> {
      const db = tdb.db.kysely;
      const rows = await db.selectFrom('lists').select(['id', 'name']).where('workspace_id', '=', workspaceId).execute();
      const names = new Map(rows.map((r) => [r.id, r.name]));
      const members = new Map<string, string[]>();
      for (const m of await db
        .selectFrom('list_members')
        .innerJoin('lists', 'lists.id', 'list_members.list_id')
        .select(['list_id', 'entity_id'])
        .where('lists.workspace_id', '=', workspaceId)
        .execute()) {
        members.set(m.list_id, [...(members.get(m.list_id) ?? []), m.entity_id]);
      }
      for (const list of acked.lists.values()) {
        const states = [list, ...(list.next ? [list.next] : [])].map((s) => JSON.stringify({ name: s.name, members: [...s.members].sort() }));
        const now = JSON.stringify({ name: names.get(list.id), members: (members.get(list.id) ?? []).sort() });
        assert.ok(states.includes(now), `acknowledged list ${list.id} is lost or changed: ${now}`);
      }
    }

    async function verify(server: ServerProcess, acked: Acked): Promise<void> {
      const db = tdb.db.kysely;
      const get = async (path: string) => {
        const res = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' } });
        return { status: res.status, json: (await res.json()) as any };
      };
      for (const id of acked.touched) {
        const list = acked.lists.get(id)!;
        const res = await get(`/v1/lists/${list.id}`);
        assert.equal(res.status, 200, `acknowledged list ${list.id} lost`);
        const members = new Set<string>();
        for (let offset = 0; ; offset += 25) {
          const page = await get(`/v1/lists/${list.id}/contacts?limit=25&offset=${offset}`);
          for (const e of page.json.data) members.add(e.id);
          if (page.json.data.length < 25) break;
        }
        const now = { name: res.json.fields.$name.value as string, members: [...members].sort() };
        const states = [list, ...(list.next ? [list.next] : [])].map((s) => ({ name: s.name, members: [...s.members].sort() }));
        assert.ok(
          states.some((s) => JSON.stringify(s) === JSON.stringify(now)),
          `list ${list.id} is half-applied: ${JSON.stringify(now)} vs ${JSON.stringify(states)}`,
        );
        const settled = states.find((s) => JSON.stringify(s) === JSON.stringify(now))!;
        acked.lists.set(list.id, { id: list.id, name: settled.name, members: new Set(settled.members) });
      }
      // Counters equal rows; a key is done exactly when its list exists.
      const lists = await db.selectFrom('lists').select(['id', 'name', 'member_count']).where('workspace_id', '=', workspaceId).execute();
      for (const l of lists) {
        const n = await db
          .selectFrom('list_members')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('list_id', '=', l.id)
          .executeTakeFirstOrThrow();
        assert.equal(Number(l.member_count), Number(n.n), `list ${l.id}: member_count ${l.member_count}, rows ${n.n}`);
        await checkEntries(db, LIST_MEMBERS, [l.id]); // the ranked index counts exactly these rows
      }
      assert.equal((await checkEntries(db, LISTS, [workspaceId])).total, lists.length);
      for (const f of acked.inFlight) {
        const row = await db
          .selectFrom('idempotency_keys')
          .select(['state', 'body'])
          .where('workspace_id', '=', workspaceId)
          .where('operation', '=', 'createList')
          .where('key', '=', f.key)
          .executeTakeFirst();
        const made = lists.filter((l) => l.name === f.name || l.name === `${f.name}-u`);
        assert.ok(made.length <= 1, `${f.name} created twice`);
        if (row?.state === 'done') assert.equal(made.length, 1, `key ${f.key} done without its list`);
        else assert.equal(made.length, 0, `list ${f.name} exists but its key is ${row?.state ?? 'absent'}`);
      }
    }
  });
}
