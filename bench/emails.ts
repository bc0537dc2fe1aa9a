// E-mail at scale (docs/emails.md), against server processes:
// 1. Pages: GET /v1/emails at offsets 0, 25%, 50%, 75% and the last page of a workspace of
//    --size e-mails (half in a mailbox others read at FULL, half at METADATA), with a user key that
//    owns none of them and a workspace key; each figure the median of --requests requests, one at a
//    time over keep-alive, next to the bare Fastify baseline (bench/baseline.ts) measured right
//    before it with the same client.
// 2. Send throughput into the outbox: POST /v1/emails/send requests per second next to
//    POST /v1/lists in the same run (autocannon, paired rounds, the ratio's median); the
//    dispatcher is off there (EMAIL_DISPATCH=false), so the figure is the write path alone.
// 3. Delivery rate: --deliveries queued e-mails delivered by a server's dispatcher to a local SMTP
//    server (smtp-server, in this process), next to nodemailer sending the same number of messages
//    straight to that server with the same pool size, in --rounds paired rounds (the ratio's median).
//   node bench/emails.ts [--dialect sqlite|postgres|both] [--size 1000000] [--requests 200] [--seconds 5] [--rounds 3] [--deliveries 2000]
//                        [--parts pages,sends,delivery]
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createTransport } from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { createKey } from '../src/auth/service.ts';
import { importKinds } from '../src/cli/import-kinds.ts';
import { rankRebuild } from '../src/db/rank/index.ts';
import type { DialectName, Executor } from '../src/db/types.ts';
import { EMAILS } from '../src/emails/repository.ts';
import { runImport } from '../src/import/run.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { isoNow, newId } from '../src/lib/ids.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { freePort } from '../test/helpers/process.ts';
import { latency, median, start, stop } from './run.ts';
import { write } from '../src/db/write.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    size: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    deliveries: { type: 'string', default: '2000' },
    parts: { type: 'string', default: 'pages,sends,delivery' },
  },
});
const PARTS = new Set(args.parts.split(','));
const SIZE = Number(args.size);
const REQUESTS = Number(args.requests);
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const DELIVERIES = Number(args.deliveries);
const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;
const BASELINE = new URL('./baseline.ts', import.meta.url).pathname;
const T0 = Date.UTC(2026, 0, 1);
// autocannon ships no types; this is the part of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
}) => Promise<{ requests: { average: number }; non2xx: number; errors: number }>;

interface World {
  workspaceId: string;
  owner: string;
  other: string;
  workspace: string;
  from: string;
}

async function world(db: Executor, name: string): Promise<World> {
  const ws = await createWorkspace(systemCtx(db), { name });
  const from = `ann@${name.toLowerCase().replace(/[^a-z]/g, '')}.test`;
  const objects = [
    { object: 'user', externalId: 'u-ann', email: from, firstName: 'Ann', role: 'member' },
    { object: 'user', externalId: 'u-bob', email: `bob-${from}`, firstName: 'Bob', role: 'member' },
    { object: 'mailbox', externalId: 'mb-full', user: 'u-ann', address: from },
    { object: 'mailbox', externalId: 'mb-meta', user: 'u-ann', address: `private-${from}`, othersSee: 'METADATA' },
  ];
  const ids = (await runImport(operatorCtx(db, ws.id), { kinds: importKinds(), text: objects.map((o) => JSON.stringify(o)).join('\n') })).ids;
  const key = async (userId: string | null) => (await createKey(operatorCtx(db, ws.id), { userId, scopes: null, expiresInMs: null })).secret;
  return {
    workspaceId: ws.id,
    owner: await key(ids.user?.['u-ann'] as string),
    other: await key(ids.user?.['u-bob'] as string),
    workspace: await key(null),
    from,
  };
}

/** `n` e-mails, 1 ms apart, alternating between the two mailboxes; `queued` also fills the outbox. */
async function seedEmails(db: Executor, w: World, n: number, queued: boolean): Promise<void> {
  const boxes = await db.selectFrom('mailboxes').select(['id', 'address']).where('workspace_id', '=', w.workspaceId).orderBy('address').execute();
  for (let i = 0; i < n; i += 20_000) {
    await write(db, async (tx) => {
      for (let j = i; j < Math.min(n, i + 20_000); j += 400) {
        const rows = Array.from({ length: Math.min(400, n - j) }, (_, k) => {
          const at = isoNow(T0 + j + k);
          const box = boxes[(j + k) % 2] as { id: string; address: string };
          return {
            id: newId('eml', T0 + j + k),
            workspace_id: w.workspaceId,
            mailbox_id: box.id,
            external_id: null,
            from_address: box.address,
            to_json: JSON.stringify([`c${j + k}@example.test`]),
            cc_json: '[]',
            bcc_json: '[]',
            subject: `Subject ${j + k}`,
            sent_at: at,
            created_at: at,
            updated_at: at,
            delivery_status: queued ? ('queued' as const) : null,
            delivery_attempts: 0,
            delivered_at: null,
            delivery_error: null,
          };
        });
        await tx.insertInto('emails').values(rows).execute();
        await tx
          .insertInto('email_bodies')
          .values(rows.map((r) => ({ email_id: r.id, html: `<p>Body of ${r.subject}</p>`, text: null })))
          .execute();
        if (queued)
          await tx
            .insertInto('email_outbox')
            .values(
              rows.map((r) => ({
                email_id: r.id,
                workspace_id: w.workspaceId,
                attempts: 0,
                next_attempt_at: r.sent_at,
                lease_owner: null,
                last_error: null,
                created_at: r.sent_at,
              })),
            )
            .execute();
      }
    });
  }
  await write(db, (tx) => rankRebuild(tx, EMAILS, [w.workspaceId]));
}

function serverEnv(dataDir: string, databaseUrl: string | undefined, port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WORKERS: '1',
    RATE_LIMIT_READ: '0',
    RATE_LIMIT_WRITE: '0',
    RATE_LIMIT_SEARCH: '0',
    EMAIL_DISPATCH: 'false',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...extra,
  };
}

/** A local SMTP server that accepts everything and counts messages. */
async function sink(): Promise<{ port: number; count: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 100,
    onData(stream, _s, cb) {
      stream.on('data', () => {});
      stream.on('end', () => {
        n++;
        cb();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  return { port, count: () => n, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function run(dialect: DialectName): Promise<void> {
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  const children: Awaited<ReturnType<typeof start>>[] = [];
  try {
    // 1. Pages.
    const t0 = performance.now();
    const big = await world(db, 'Pages');
    await seedEmails(db, big, SIZE, false);
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.log(`${dialect}: seeded ${SIZE.toLocaleString('en')} e-mails in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const port = await freePort();
    children.push(await start([MAIN, 'serve'], serverEnv(tdb.dataDir, tdb.databaseUrl, port), `http://127.0.0.1:${port}/healthz`));
    const basePort = await freePort();
    children.push(await start([BASELINE], { PORT: String(basePort) }, `http://127.0.0.1:${basePort}/`));
    for (const [who, secret] of PARTS.has('pages')
      ? ([
          ['user key', big.other],
          ['workspace key', big.workspace],
        ] as const)
      : []) {
      for (const [label, offset] of [
        ['first', 0],
        ['25%', SIZE / 4],
        ['50%', SIZE / 2],
        ['75%', (SIZE * 3) / 4],
        ['last', SIZE - 25],
      ] as const) {
        const base = await latency(`http://127.0.0.1:${basePort}/`, {}, REQUESTS);
        const url = `http://127.0.0.1:${port}/v1/emails?limit=25&offset=${Math.floor(offset)}`;
        const page = await latency(url, { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' }, REQUESTS, (body) => {
          if (body.totalCount !== SIZE || body.data.length !== 25) throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
        });
        console.log(
          `${dialect.padEnd(8)}  ${who.padEnd(13)}  ${`${Math.floor(offset).toLocaleString('en')} (${label})`.padEnd(18)}  median ${page.median.toFixed(2).padStart(6)} ms  p95 ${page.p95.toFixed(2).padStart(6)} ms  baseline ${base.median.toFixed(2)} ms`,
        );
      }
    }

    // 2. Send throughput into the outbox, paired with POST /v1/lists.
    if (PARTS.has('sends')) await sends(db, dialect, port);
    for (const c of children.splice(0)) await stop(c);
    if (PARTS.has('delivery')) await delivery(db, dialect, tdb.dataDir, tdb.databaseUrl);
  } finally {
    for (const c of children) await stop(c);
    await tdb.drop();
  }
}

async function sends(db: Executor, dialect: string, port: number): Promise<void> {
  const fresh = await world(db, 'Throughput');
  const auth = { authorization: `Bearer ${fresh.owner}`, 'service-version': '2026-03-01', 'content-type': 'application/json' };
  const post = (path: string, body: unknown) =>
    autocannon({ url: `http://127.0.0.1:${port}${path}`, method: 'POST', headers: auth, body: JSON.stringify(body), connections: 10, duration: SECONDS });
  const list = { fields: { $name: 'Bench list', $objectType: 'contact' } };
  const email = { from: fresh.from, to: ['carol@example.test'], subject: 'Bench', messageBody: { contentType: 'TEXT', content: 'Hello from the bench.' } };
  await post('/v1/lists', list);
  await post('/v1/emails/send', email);
  const rounds: Array<{ lists: number; sends: number }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const l = await post('/v1/lists', list);
    const s = await post('/v1/emails/send', email);
    if (l.non2xx || s.non2xx || l.errors || s.errors) throw new Error(`failed requests: lists ${l.non2xx}/${l.errors}, sends ${s.non2xx}/${s.errors}`);
    rounds.push({ lists: l.requests.average, sends: s.requests.average });
    console.log(
      `${dialect.padEnd(8)}  round ${r + 1}: POST /v1/lists ${l.requests.average.toFixed(0)} req/s, POST /v1/emails/send ${s.requests.average.toFixed(0)} req/s`,
    );
  }
  const ratios = rounds.map((r) => r.sends / r.lists);
  console.log(
    `${dialect.padEnd(8)}  send / list throughput: ×${median(ratios).toFixed(2)} (median of ${ROUNDS} paired rounds; range ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  );
}

/** 3. Delivery rate to a local SMTP server: --rounds rounds, each nodemailer straight then the dispatcher. */
async function delivery(db: Executor, dialect: string, dataDir: string, databaseUrl: string | undefined): Promise<void> {
  const ratios: number[] = [];
  const rates: number[] = [];
  const directs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const { rate, direct } = await deliveryRound(db, dialect, dataDir, databaseUrl, r);
    ratios.push(rate / direct);
    rates.push(rate);
    directs.push(direct);
  }
  console.log(
    `${dialect.padEnd(8)}  dispatcher median ${median(rates).toFixed(0)}/s, nodemailer straight median ${median(directs).toFixed(0)}/s; dispatcher / nodemailer: ×${median(ratios).toFixed(2)} (median of ${ROUNDS} paired rounds; range ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  );
}

async function deliveryRound(db: Executor, dialect: string, dataDir: string, databaseUrl: string | undefined, r: number) {
  const children: Awaited<ReturnType<typeof start>>[] = [];
  const queued = await world(db, `Delivery ${r}`);
  await seedEmails(db, queued, DELIVERIES, true);
  const smtp = await sink();
  try {
    const direct = createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 });
    const d0 = performance.now();
    await Promise.all(
      Array.from({ length: DELIVERIES }, (_, i) =>
        direct.sendMail({ from: queued.from, to: `c${i}@example.test`, subject: `Subject ${i}`, html: `<p>Body of Subject ${i}</p>` }),
      ),
    );
    const directRate = DELIVERIES / ((performance.now() - d0) / 1000);
    direct.close();
    const before = smtp.count();
    const dPort = await freePort();
    const env = serverEnv(dataDir, databaseUrl, dPort, { EMAIL_DISPATCH: 'true', SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_POLL_MS: '20' });
    children.push(await start([MAIN, 'serve'], env, `http://127.0.0.1:${dPort}/healthz`));
    // From the first message to the last: the server's start-up is not delivery.
    let first = 0;
    while (smtp.count() - before < DELIVERIES) {
      if (!first && smtp.count() > before) first = performance.now();
      await new Promise((r) => setTimeout(r, 5));
    }
    const seconds = (performance.now() - (first || performance.now())) / 1000;
    // Settled: every outbox row gone (the last commits follow the last acceptance).
    while (
      Number(
        (
          await db
            .selectFrom('email_outbox')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ) > 0
    )
      await new Promise((r) => setTimeout(r, 5));
    const settledSeconds = (performance.now() - (first || performance.now())) / 1000;
    const rate = DELIVERIES / seconds;
    console.log(
      `${dialect.padEnd(8)}  round ${r + 1}: dispatcher ${DELIVERIES} e-mails delivered in ${seconds.toFixed(2)} s (first to last) = ${rate.toFixed(0)}/s, all settled after ${settledSeconds.toFixed(2)} s; nodemailer straight to the same server: ${directRate.toFixed(0)}/s (×${(rate / directRate).toFixed(2)})`,
    );
    return { rate, direct: directRate };
  } finally {
    for (const c of children.splice(0)) await stop(c);
    await smtp.close();
  }
}

console.log(`pages: ${REQUESTS} requests per figure (median, p95), one at a time over keep-alive; baseline = bare Fastify, same client`);
for (const dialect of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as DialectName]) await run(dialect);
