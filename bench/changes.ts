// The speed goals of field history and webhooks (docs/history.md, docs/events.md), on one database:
// - history: one contact with --changes changes of one field (written straight into field_history,
//   as a long life of updates would have left them), and another whose changes come in runs of 10
//   identical values (each entry shown stands for 10 rows: the read collapses them). Pages of
//   GET /v1/contacts/{id}/fields/{fieldKey}/history at the first page and cursors at 25%, 50%, 75%
//   and the last page, limits 20 and 100, each the median of --requests sequential requests beside
//   the median of as many GET /v1/contacts/{id} of the same contact (the reference): at most 10 ms.
// - webhooks: two servers on the database (PostgreSQL for the goal), a subscription taking every
//   event to a receiver in this process, which counts each webhook-id. (a) Backlog: --backlog
//   copies of a real contact.created event (each its own id and object) appended in one
//   transaction through the change log while both servers run; events per second from that commit
//   to the last delivery: at least 1,000. (b) Steady: --rate creates per second through HTTP, half to
//   each server, for --seconds; the lag from each event's occurredAt (stamped before its commit) to
//   its receipt, and from the create's answer (after its commit) to the receipt: p99 at most 1 s.
//   Every event must arrive once: missing and duplicate deliveries are printed. The receiver's own
//   rate (autocannon, 32 connections, a small body) is printed as the machine's reference.
//   With --dispatchers 1 the first server takes every create and runs no dispatcher
//   (WEBHOOK_DISPATCH=false): every event reaches the endpoint through the other server's.
//   With --before PATH (another checkout's src/cli/main.ts) only (b) runs, --rounds times, each
//   round once with that checkout's servers and once with this one's (alternating, fresh servers
//   each time): the medians of each round's p50 and p99 lags, and their ratios.
//   node bench/changes.ts [--dialect sqlite|postgres] [--only history|webhooks] [--changes 100000] [--backlog 20000] [--rate 200] [--seconds 20]
//     [--dispatchers 1|2] [--before PATH --rounds 3]
// Other environment: WEBHOOK_* settings are passed to the servers as they are (defaults otherwise).
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { chunks } from '../src/db/chunks.ts';
import type { DialectName } from '../src/db/types.ts';
import { insertEvents } from '../src/changes/repository.ts';
import { operatorCtx } from '../src/lib/context.ts';
import { isoNow, newId } from '../src/lib/ids.ts';
import { createRecord, RECORD_TYPES } from '../src/records/service.ts';
import { addWebhook } from '../src/webhooks/service.ts';
import { latency, MAIN, median, seedContext, startServer, stop } from './run.ts';
import { write } from '../src/db/write.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'postgres' },
    only: { type: 'string' },
    changes: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
    backlog: { type: 'string', default: '20000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '20' },
    dispatchers: { type: 'string', default: '2' },
    before: { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});
const dialect = args.dialect as DialectName;
const VERSION = { 'service-version': '2026-03-01' };
const load1 = () => loadavg()[0]!.toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
/** A cursor of the history API (src/records/history.ts): the seq the next page starts below, of this record's field. */
const cursor = (recordId: string, field: string, seq: number) => Buffer.from(`h${seq}.${recordId}.${field}`).toString('base64url');

async function history(): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const db = tdb.db.kysely;
  const n = Number(args.changes);
  const field = '$profilePhotoUrl';
  const t0 = performance.now();
  const make = async (label: string, valueOf: (seq: number) => string) => {
    const c = await write(db, (tx) =>
      createRecord(operatorCtx(tx, ctx.workspaceId), { type: RECORD_TYPES.contact, fields: { $name: { firstName: 'History', lastName: label } } }),
    );
    const start = Date.UTC(2026, 0, 1);
    const rows = Array.from({ length: n }, (_, i) => ({
      record_id: c.id,
      field,
      seq: i + 1,
      workspace_id: ctx.workspaceId,
      value: JSON.stringify(valueOf(i + 1)),
      recorded_at: new Date(start + i * 1000).toISOString(),
      is_create: 0,
    }));
    await write(db, async (tx) => {
      for (const part of chunks(rows, 1000)) await tx.insertInto('field_history').values(part).execute();
    });
    return c.id;
  };
  const records = [
    { label: 'every change differs', id: await make('distinct', (s) => `https://photo.test/${s}`), shown: n },
    { label: 'runs of 10 identical', id: await make('runs', (s) => `https://photo.test/${Math.ceil(s / 10)}`), shown: Math.ceil(n / 10) },
  ];
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
  console.error(`${dialect}: seeded 2 × ${n} changes in ${((performance.now() - t0) / 1000).toFixed(0)} s; load ${load1()}`);
  const server = await startServer(tdb, 1);
  try {
    const headers = { authorization: `Bearer ${ctx.secret}`, ...VERSION };
    for (const r of records) {
      const retrieve = await latency(`${server.url}/v1/contacts/${r.id}`, headers, Number(args.requests));
      for (const limit of [20, 100]) {
        for (const [label, at] of [
          ['first', 0],
          ['25%', 0.25],
          ['50%', 0.5],
          ['75%', 0.75],
          ['last', 1],
        ] as const) {
          // The cursor below which the page starts: the last page holds `limit` entries with the start.
          const seq = label === 'first' ? undefined : label === 'last' ? ((limit - 1) * n) / r.shown + 1 : Math.round(n * (1 - at));
          const url = `${server.url}/v1/contacts/${r.id}/fields/${field}/history?limit=${limit}${seq === undefined ? '' : `&after=${cursor(r.id, field, seq)}`}`;
          const page = await latency(url, headers, Number(args.requests), (body) => {
            // Full pages, the last one with the record's start (at least `limit` entries below every cursor when --changes ≥ 40 × limit).
            if (body.data.length !== limit || body.hasMore !== (label !== 'last'))
              throw new Error(`${url}: ${body.data.length} entries, hasMore ${body.hasMore}`);
          });
          console.log(
            `${dialect.padEnd(8)}  ${r.label}  limit ${String(limit).padStart(3)}  ${label.padEnd(5)}  median ${page.median.toFixed(2).padStart(6)} ms  p95 ${page.p95.toFixed(2).padStart(6)} ms  (GET /v1/contacts/{id} median ${retrieve.median.toFixed(2)} ms)  load ${load1()}`,
          );
        }
      }
    }
  } finally {
    await stop(server.child);
    await tdb.drop();
  }
}

/** A webhook endpoint: every POST's webhook-id, when it arrived, and the event's occurredAt and object id. */
async function receiver() {
  const got = new Map<string, { at: number; count: number; occurredAt: number; objectId: string }>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const at = Date.now();
      const id = String(req.headers['webhook-id']);
      if (id === 'ref') return void res.writeHead(204).end();
      const seen = got.get(id);
      if (seen) seen.count++;
      else {
        const body = JSON.parse(Buffer.concat(parts).toString()) as { occurredAt: string; data: { object: { id: string } } };
        got.set(id, { at, count: 1, occurredAt: Date.parse(body.occurredAt), objectId: body.data.object.id });
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
  return {
    url,
    got,
    reset: () => got.clear(),
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function webhooks(): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const db = tdb.db.kysely;
  const hook = await receiver();
  await addWebhook(operatorCtx(db, ctx.workspaceId), { url: hook.url, events: 'all', allowPrivate: true });
  const passed = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('WEBHOOK_'))) as Record<string, string>;
  const extra = { WEBHOOK_ALLOW_PRIVATE: 'true', EMAIL_DISPATCH: 'false', ...passed };
  const envOf = (i: number) => (i === 0 && args.dispatchers === '1' ? { ...extra, WEBHOOK_DISPATCH: 'false' } : extra);
  const startBoth = async (main = MAIN) => [await startServer(tdb, 1, envOf(0), main), await startServer(tdb, 1, envOf(1), main)];
  let servers = args.before ? [] : await startBoth();
  /** Waits until `expected` events arrived (or 60 s without progress), then 2 s for late duplicates; what is missing and doubled. */
  const settle = async (expected: Set<string>) => {
    let last = -1;
    let still = Date.now();
    while ([...expected].some((id) => !hook.got.has(id))) {
      if (hook.got.size !== last) [last, still] = [hook.got.size, Date.now()];
      else if (Date.now() - still > 60_000) break;
      await sleep(50);
    }
    await sleep(2000);
    const missing = [...expected].filter((id) => !hook.got.has(id)).length;
    const doubled = [...hook.got.values()].reduce((s, x) => s + x.count - 1, 0);
    const foreign = [...hook.got.keys()].filter((id) => !expected.has(id)).length;
    const queued = Number(
      (
        await db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    return `${missing} missing, ${doubled} duplicates, ${foreign} unexpected, ${queued} left in the outbox`;
  };
  const eventIds = async () => new Set((await db.selectFrom('events').select('id').where('workspace_id', '=', ctx.workspaceId).execute()).map((e) => e.id));
  /** (b) Creates at a steady rate through HTTP, alternating between the servers; the lags of their events. */
  const steady = async (label: string) => {
    const earlier = await eventIds();
    hook.reset();
    const rate = Number(args.rate);
    const total = rate * Number(args.seconds);
    const headers = { authorization: `Bearer ${ctx.secret}`, ...VERSION, 'content-type': 'application/json' };
    const answered = new Map<string, number>();
    const failures: string[] = [];
    const inFlight: Promise<void>[] = [];
    const start = Date.now();
    for (let sent = 0; sent < total;) {
      const due = Math.min(total, Math.floor(((Date.now() - start) * rate) / 1000) + 1);
      for (; sent < due; sent++) {
        const i = sent;
        inFlight.push(
          fetch(`${servers[args.dispatchers === '1' ? 0 : i % 2]!.url}/v1/contacts`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ fields: { $name: { firstName: 'Steady', lastName: `${i}` }, $email: [`steady.${i}@hooks.test`] } }),
          })
            .then(async (res) => {
              const body = (await res.json()) as { id: string };
              if (res.status === 200) answered.set(body.id, Date.now());
              else failures.push(`HTTP ${res.status}`);
            })
            .catch((err: Error & { cause?: { code?: string } }) => void failures.push(err.cause?.code ?? err.message)),
        );
      }
      await sleep(5);
    }
    await Promise.all(inFlight);
    const sentRate = total / ((Date.now() - start) / 1000);
    const made = new Set([...(await eventIds())].filter((id) => !earlier.has(id)));
    const state2 = await settle(made);
    const got = [...hook.got.values()].filter((x) => answered.has(x.objectId));
    const fromEvent = got.map((x) => x.at - x.occurredAt);
    const fromAnswer = got.map((x) => x.at - answered.get(x.objectId)!);
    const ms = (xs: number[]) => `p50 ${pct(xs, 0.5)} ms, p99 ${pct(xs, 0.99)} ms, max ${Math.max(...xs)} ms`;
    console.log(
      `${label}${total} creates at ${sentRate.toFixed(0)}/s over ${args.seconds} s, 2 servers, ${args.dispatchers} dispatching [${dialect}]: lag from occurredAt ${ms(fromEvent)}; from the create's answer ${ms(fromAnswer)}; ${failures.length} failed creates${failures.length ? ` (${[...new Set(failures)].join(', ')}; servers exited: ${servers.map((x) => x.child.exitCode).join(', ')})` : ''}; ${made.size} events: ${state2}; load ${load1()}`,
    );
    return { fromEvent, fromAnswer };
  };

  try {
    if (args.before) {
      type Lags = Awaited<ReturnType<typeof steady>>;
      const lags = { before: [] as Lags[], after: [] as Lags[] };
      for (let r = 0; r < Number(args.rounds); r++) {
        const order = r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
        for (const name of order) {
          servers = await startBoth(name === 'before' ? args.before : MAIN);
          try {
            lags[name].push(await steady(`${name}, round ${r + 1}: `));
          } finally {
            for (const s of servers) await stop(s.child);
            servers = [];
          }
        }
      }
      // Each figure: the median over the rounds of that round's percentile.
      const of = (name: 'before' | 'after', key: keyof Lags, p: number) => median(lags[name].map((l) => pct(l[key], p)));
      for (const [key, what] of [
        ['fromEvent', 'from occurredAt'],
        ['fromAnswer', "from the create's answer"],
      ] as const) {
        const [b50, a50, b99, a99] = [of('before', key, 0.5), of('after', key, 0.5), of('before', key, 0.99), of('after', key, 0.99)];
        console.log(
          `lag ${what}, medians of ${args.rounds} rounds [${dialect}, ${args.dispatchers} dispatching]: p50 before ${b50} ms, after ${a50} ms (${(a50 / b50).toFixed(2)}); p99 before ${b99} ms, after ${a99} ms (${(a99 / b99).toFixed(2)}); load ${load1()}`,
        );
      }
      return;
    }
    // The receiver alone, as the reference of what this machine delivers to it.
    const sample = JSON.stringify({ id: 'evt_x', type: 'contact.created', occurredAt: new Date().toISOString(), data: { object: { id: 'x' } } });
    const alone = await autocannon({ url: hook.url, method: 'POST', connections: 32, duration: 3, body: sample, headers: { 'webhook-id': 'ref' } });
    console.log(`receiver alone (autocannon, 32 connections): ${Math.round(alone.requests.average)} POST/s; load ${load1()}`);
    hook.reset();

    // (a) A backlog committed at once, both dispatchers polling: copies of a real contact.created
    // event, each with an id and an object of its own, appended through the change log's insertEvents.
    const model = await write(db, (tx) =>
      createRecord(operatorCtx(tx, ctx.workspaceId), {
        type: RECORD_TYPES.contact,
        fields: { $name: { firstName: 'Model', lastName: 'Event' }, $email: ['model@hooks.test'] },
      }),
    );
    const modelEvent = await db.selectFrom('events').selectAll().where('object_id', '=', model.id).executeTakeFirstOrThrow();
    await settle(await eventIds());
    hook.reset();
    const n = Number(args.backlog);
    const t0 = performance.now();
    await write(db, async (tx) => {
      const rows = Array.from({ length: n }, () => {
        const id = newId('evt', Date.now());
        const objectId = newId('con', Date.now());
        const body = JSON.parse(modelEvent.body) as { id: string; occurredAt: string; data: { object: { id: string } } };
        Object.assign(body, { id, occurredAt: isoNow(Date.now()) });
        body.data.object.id = objectId;
        return { id, workspace_id: ctx.workspaceId, type: modelEvent.type, object_id: objectId, occurred_at: body.occurredAt, body: JSON.stringify(body) };
      });
      await insertEvents(tx, rows);
    });
    const committed = Date.now();
    console.error(
      `${dialect}: ${n} events (${modelEvent.body.length} bytes each) committed in one transaction in ${((performance.now() - t0) / 1000).toFixed(1)} s; load ${load1()}`,
    );
    const modelIds = new Set([modelEvent.id]);
    const backlog = new Set([...(await eventIds())].filter((id) => !modelIds.has(id)));
    const state = await settle(backlog);
    if (hook.got.size === 0) throw new Error(`backlog: nothing delivered (${state}); servers exited: ${servers.map((x) => x.child.exitCode).join(', ')}`);
    const lastAt = Math.max(...[...hook.got.values()].map((x) => x.at));
    const firstAt = Math.min(...[...hook.got.values()].map((x) => x.at));
    console.log(
      `backlog of ${backlog.size} events, 2 servers [${dialect}]: ${Math.round(backlog.size / ((lastAt - committed) / 1000))} events/s from the commit to the last delivery (${Math.round(backlog.size / ((lastAt - firstAt) / 1000))}/s from the first); ${state}; load ${load1()}`,
    );
    hook.reset();

    await steady('');
  } finally {
    for (const s of servers) await stop(s.child);
    await hook.stop();
    await tdb.drop();
  }
}

if (!args.only || args.only === 'history') await history();
if (!args.only || args.only === 'webhooks') await webhooks();
