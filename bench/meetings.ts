// Meeting pages at any offset (docs/meetings.md, docs/pages.md): 100,000 meetings of one workspace,
// a tenth with the key's user among the attendees, half private (METADATA for everyone else),
// every one with an attendee who is a contact of an account with an opportunity, so each page
// resolves access per row, reads contents for its FULL rows and computes its three derived
// relationships. GET /v1/meetings against a server process, one request at a time over
// keep-alive, at offsets 0, 50% and the last page, for a user key and a workspace key. Each figure
// is the median of its requests, next to the median of the bare Fastify baseline
// (bench/baseline.ts) measured right before it with the same client, and their ratio.
//   node bench/meetings.ts [--dialect sqlite|postgres|both] [--size 100000] [--requests 200]
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import { rankRebuild } from '../src/db/rank/index.ts';
import type { DialectName, Executor } from '../src/db/types.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { isoNow, newId } from '../src/lib/ids.ts';
import { MEETINGS } from '../src/meetings/repository.ts';
import { RECORDS } from '../src/records/repository.ts';
import { createUser } from '../src/users/service.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { latency, start, startBaseline, startServer, stop } from './run.ts';
import { write } from '../src/db/write.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    size: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
  },
});
const SIZE = Number(args.size);
const REQUESTS = Number(args.requests);
const CONTACTS = 1000;
const T0 = Date.UTC(2025, 0, 1);

/** 1,000 contacts (c<i>@bench.test), each of one of 100 accounts, each account with an opportunity. */
async function seedRecords(db: Executor, ws: string): Promise<void> {
  const at = isoNow(T0);
  await write(db, async (tx) => {
    const accounts = Array.from({ length: 100 }, (_, i) => newId('acc', T0 + i));
    const row = (id: string, kind: 'account' | 'contact' | 'opportunity', fields: object) => ({
      id,
      workspace_id: ws,
      kind,
      external_id: null,
      fields: JSON.stringify(fields),
      created_at: at,
      updated_at: at,
    });
    await tx
      .insertInto('records')
      .values(accounts.map((id, i) => row(id, 'account', { $name: `Account ${i}` })))
      .execute();
    const opps = accounts.map((_a, i) => newId('opp', T0 + i));
    await tx
      .insertInto('records')
      .values(opps.map((id, i) => row(id, 'opportunity', { $name: `Deal ${i}` })))
      .execute();
    await tx
      .insertInto('entity_relationships')
      .values(opps.map((id, i) => ({ source_id: id, name: '$account', object_type: 'account', target_id: accounts[i] as string, position: 0 })))
      .execute();
    for (let i = 0; i < CONTACTS; i += 200) {
      const ids = Array.from({ length: 200 }, (_, k) => newId('con', T0 + i + k));
      await tx
        .insertInto('records')
        .values(ids.map((id, k) => row(id, 'contact', { $email: [`c${i + k}@bench.test`] })))
        .execute();
      await tx
        .insertInto('record_values')
        .values(
          ids.map((id, k) => ({
            workspace_id: ws,
            object_type: 'contact',
            field: '$email',
            value_text: `c${i + k}@bench.test`,
            value_num: null,
            record_id: id,
          })),
        )
        .execute();
      await tx
        .insertInto('entity_relationships')
        .values(ids.map((id, k) => ({ source_id: id, name: '$account', object_type: 'account', target_id: accounts[(i + k) % 100] as string, position: 0 })))
        .execute();
    }
    for (const kind of ['account', 'contact', 'opportunity']) await rankRebuild(tx, RECORDS, [ws, kind]);
  });
}

async function seedMeetings(db: Executor, ws: string, n: number, userEmail: string): Promise<void> {
  for (let i = 0; i < n; i += 10_000) {
    await write(db, async (tx) => {
      for (let j = i; j < Math.min(n, i + 10_000); j += 250) {
        const rows = Array.from({ length: Math.min(250, n - j) }, (_, k) => {
          const m = j + k;
          const start = isoNow(T0 + m * 60_000);
          const attendees = [`c${m % CONTACTS}@bench.test`, `guest${m}@elsewhere.test`, ...(m % 10 === 0 ? [userEmail] : [])];
          return {
            id: newId('mtg', T0 + m),
            workspace_id: ws,
            external_id: null,
            title: `Meeting ${m}`,
            start_date: start,
            end_date: start,
            meeting_url: null,
            organizer_email: `org${m % 50}@acme.test`,
            attendee_emails: JSON.stringify(attendees),
            privacy_setting: m % 2 === 0 ? ('METADATA' as const) : null,
            created_at: start,
            updated_at: start,
          };
        });
        await tx.insertInto('meetings').values(rows).execute();
        await tx
          .insertInto('meeting_contents')
          .values(rows.map((r) => ({ meeting_id: r.id, description: `Notes of ${r.title}`, transcript_id: null })))
          .execute();
        const parts = rows.flatMap((r) =>
          [r.organizer_email, ...(JSON.parse(r.attendee_emails) as string[])].map((email) => ({ meeting_id: r.id, workspace_id: ws, email })),
        );
        for (let p = 0; p < parts.length; p += 300)
          await tx
            .insertInto('meeting_participants')
            .values(parts.slice(p, p + 300))
            .execute();
      }
    });
  }
  await write(db, (tx) => rankRebuild(tx, MEETINGS, [ws]));
}

async function run(dialect: DialectName): Promise<void> {
  const t0 = performance.now();
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  const children: Awaited<ReturnType<typeof start>>[] = [];
  try {
    const ws = await createWorkspace(systemCtx(db), { name: 'Bench meetings' });
    const octx = operatorCtx(db, ws.id);
    const user = await createUser(octx, { email: 'ann@bench.test', role: 'member' });
    const keys = {
      user: await createKey(octx, { userId: user.id, scopes: ['meetings:read'], expiresInMs: null }),
      workspace: await createKey(octx, { userId: null, scopes: ['meetings:read'], expiresInMs: null }),
    };
    await seedRecords(db, ws.id);
    await seedMeetings(db, ws.id, SIZE, 'ann@bench.test');
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.error(`${dialect}: seeded ${SIZE.toLocaleString('en')} meetings in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

    const server = await startServer(tdb, 1);
    children.push(server.child);
    const baseline = await startBaseline();
    children.push(baseline.child);

    for (const [who, key] of Object.entries(keys)) {
      const auth = { authorization: `Bearer ${key.secret}`, 'service-version': '2026-03-01' };
      for (const [label, offset] of [
        ['first', 0],
        ['50%', SIZE / 2],
        ['last', SIZE - 25],
      ] as const) {
        const base = await latency(baseline.url, {}, REQUESTS);
        const url = `${server.url}/v1/meetings?limit=25&offset=${offset}`;
        const page = await latency(url, auth, REQUESTS, (body) => {
          if (body.totalCount !== SIZE || body.data.length !== 25) throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
          const levels = new Set(body.data.map((m: { accessLevel: string }) => m.accessLevel));
          if (!levels.has('METADATA') || !levels.has('FULL')) throw new Error(`${url}: a page should mix FULL and METADATA rows`);
          if (body.data.some((m: any) => m.relationships.$opportunity.values.length !== 1)) throw new Error(`${url}: derived relationships missing`);
        });
        const cells = [dialect.padEnd(8), who.padEnd(9), `${offset.toLocaleString('en')} (${label})`.padEnd(16)];
        console.log(
          `${cells.join('  ')}  median ${page.median.toFixed(2).padStart(6)} ms  p95 ${page.p95.toFixed(2).padStart(6)} ms  baseline ${base.median.toFixed(2)} ms  ×${(page.median / base.median).toFixed(1)}`,
        );
      }
    }
  } finally {
    for (const c of children) await stop(c);
    await tdb.drop();
  }
}

console.log(`${REQUESTS} requests per figure (median, p95), one at a time over keep-alive; baseline = bare Fastify, same client`);
for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as DialectName]) await run(dialect);
