// GET /v1/messages at scale (issue 4): 1,000,000 messages in 5,000 channels (1,000 public,
// 1,000 restricted, 3,000 private), the caller a member of 200. Measures the first page and the
// page at offset 10,000 for a user key and a workspace key on SQLite and PostgreSQL, as medians of
// in-process requests (app.inject: the whole pipeline, no sockets), with ratios to
// /v1/auth/validate measured in the same run. Also times the page query alone.
//   node bench/messages.ts [--messages 1000000] [--dialect sqlite|postgres|both] [--runs 200]
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createUser } from '../src/users/service.ts';
import { findPage, MESSAGES } from '../src/messages/repository.ts';
import { rankRebuild } from '../src/db/rank/index.ts';
import { buildTestApp, call, keyFor, type TestApp } from '../test/helpers/app.ts';
import { probeServices, TEST_DATABASE_URL } from '../test/helpers/services.ts';
import { channelsFor, loadPostgres, loadSqlite, type Shape } from './messages-data.ts';
import { systemCtx, operatorCtx } from '../src/lib/context.ts';
import { write } from '../src/db/write.ts';

const { values } = parseArgs({ options: { messages: { type: 'string' }, dialect: { type: 'string' }, runs: { type: 'string' } } });
const shape: Shape = { channels: 5000, public: 1000, restricted: 1000, messages: Number(values.messages ?? 1_000_000), memberOf: 200 };
const RUNS = Number(values.runs ?? 200);

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  return { median: at(0.5), p95: at(0.95) };
}

async function time(runs: number, fn: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  for (let i = 0; i < Math.min(20, runs); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return stats(out);
}

async function plan(t: TestApp, query: string): Promise<string> {
  const prefix = t.dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
  const r = await sql.raw<Record<string, unknown>>(prefix + query).execute(t.deps.db.kysely);
  return r.rows.map((row) => String(t.dialect === 'sqlite' ? row.detail : row['QUERY PLAN'])).join('\n    ');
}

async function benchDialect(dialect: 'sqlite' | 'postgres') {
  const t = await buildTestApp(dialect);
  try {
    const db = t.deps.db.kysely;
    const ws = await createWorkspace(systemCtx(db), { name: 'bench' });
    const user = await createUser(operatorCtx(db, ws.id), { email: 'bench@example.test', role: 'member' });
    const gen = channelsFor(shape);
    const t0 = performance.now();
    if (dialect === 'sqlite') loadSqlite(t.tdb.sqliteFile as string, ws.id, user.id, shape, gen);
    else await loadPostgres(TEST_DATABASE_URL, t.tdb.schema as string, ws.id, user.id, shape, gen);
    // Written straight into the tables: the ranked index is counted from them (docs/pages.md).
    await write(db, (tx) => rankRebuild(tx, MESSAGES, [ws.id]));
    console.log(`\n[${dialect}] loaded ${shape.messages.toLocaleString()} messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const userKey = await keyFor(t, ws.id, user.id);
    const wsKey = await keyFor(t, ws.id, null);
    const baseline = await time(RUNS, () => call(t, userKey, 'GET', '/v1/auth/validate'));
    console.log(`  baseline GET /v1/auth/validate: median ${baseline.median.toFixed(2)} ms`);
    for (const [who, key, userId] of [
      ['user key', userKey, user.id],
      ['workspace key', wsKey, null],
    ] as const) {
      const { total } = await findPage(db, { workspaceId: ws.id, userId }, { limit: 1, offset: 0 });
      console.log(`  ${who}: sees ${total.toLocaleString()} of ${shape.messages.toLocaleString()}`);
      for (const offset of [0, 10_000]) {
        const url = `/v1/messages?limit=25&offset=${offset}`;
        const check = await call(t, key, 'GET', url);
        if (check.statusCode !== 200 || check.json().data.length !== 25) throw new Error(`unexpected answer ${check.statusCode}`);
        const s = await time(RUNS, () => call(t, key, 'GET', url));
        const ok = s.median <= 20 ? 'ok' : 'OVER 20 ms';
        console.log(
          `    GET ${url}: median ${s.median.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms, ${(s.median / baseline.median).toFixed(1)}x baseline  [${ok}]`,
        );
        const d = await time(Math.min(RUNS, 30), () => findPage(db, { workspaceId: ws.id, userId }, { limit: 25, offset }));
        console.log(`      page query alone: median ${d.median.toFixed(2)} ms`);
      }
    }
    const member = `m.channel_id in (select cm.channel_id from channel_members cm where cm.user_id = '${user.id}')`;
    const walk = `select m.id from messages m where m.workspace_id = '${ws.id}' and (m.channel_visibility <> 'private' or ${member}) order by m.sent_at desc, m.id desc limit 25 offset 10000`;
    console.log(`  plan (walk, user key, offset 10000):\n    ${await plan(t, walk)}`);
  } finally {
    await t.close();
  }
}

const available = (await probeServices()).postgres ? ['sqlite', 'postgres'] : ['sqlite'];
const wanted = values.dialect === 'sqlite' || values.dialect === 'postgres' ? [values.dialect] : ['sqlite', 'postgres'];
console.log(
  `messages bench: ${shape.messages.toLocaleString()} messages, ${shape.channels} channels (${shape.public} public, ${shape.restricted} restricted), caller member of ${shape.memberOf}; ${RUNS} runs each`,
);
for (const d of wanted as Array<'sqlite' | 'postgres'>) {
  if (!available.includes(d)) console.log(`[${d}] not reachable: skipped`);
  else await benchDialect(d);
}
