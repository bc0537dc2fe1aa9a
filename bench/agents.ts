// The two speed goals of the agents' features (docs/mcp.md, docs/enrichment.md), each a ratio of
// two setups measured back to back in rounds (pairedRounds):
// - a `read_from_rolodex` tool call (POST /mcp, one JSON-RPC tools/call) against the same REST
//   GET of an account, on one server: at least 0.5;
// - account creates with ENRICHMENT=on-create against ENRICHMENT=manual, each on its own server
//   and database, every create carrying a website so that on-create queues a run: at least 0.9.
//   The website is a private address, so every run the creates queue fails at once in the
//   background: what is measured is the cost of queueing, and of the runner beside the creates.
//   node bench/agents.ts [--dialect sqlite|postgres] [--workers 1] [--only mcp|create]
// BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS apply as in bench/run.ts.
import { parseArgs } from 'node:util';
import type { DialectName } from '../src/db/types.ts';
import { load, pairedRounds, seedContext, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: { dialect: { type: 'string', default: 'sqlite' }, workers: { type: 'string', default: '1' }, only: { type: 'string' } },
});
const dialect = args.dialect as DialectName;
const workers = Number(args.workers);
const VERSION = { 'service-version': '2026-03-01' };

async function toolCall(): Promise<void> {
  const { tdb, ctx } = await seedContext(dialect);
  const server = await startServer(tdb, workers);
  try {
    const auth = { authorization: `Bearer ${ctx.secret}` };
    const created = await fetch(`${server.url}/v1/accounts`, {
      method: 'POST',
      headers: { ...auth, ...VERSION, 'content-type': 'application/json' },
      body: JSON.stringify({ fields: { $name: 'Bench account', $website: ['https://bench.example'] } }),
    });
    const id = ((await created.json()) as { id: string }).id;
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_from_rolodex', arguments: { path: `/v1/accounts/${id}` } } };
    const mcpHeaders = { ...auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const probe = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders, 'content-type': 'application/json' },
      body: JSON.stringify(call),
    });
    const answer = (await probe.json()) as { result?: { isError?: boolean } };
    if (probe.status !== 200 || !answer.result || answer.result.isError) throw new Error(`the tool call failed: ${probe.status} ${JSON.stringify(answer)}`);
    const r = await pairedRounds(
      () => load(`${server.url}/v1/accounts/${id}`, { headers: { ...auth, ...VERSION } }),
      () => load(`${server.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(call) }),
    );
    console.log(
      `read_from_rolodex vs GET /v1/accounts/{id} [${dialect}/${workers}]: ${Math.round(r.rps)} against ${r.referenceRps.join(', ')} req/s; ratio ${r.ratio.toFixed(2)} (rounds ${r.ratios.map((x) => x.toFixed(2)).join(', ')}); p50 ${r.p50} ms; non-2xx ${r.non2xx}, errors ${r.errors}`,
    );
  } finally {
    await stop(server.child);
    await tdb.drop();
  }
}

async function onCreate(): Promise<void> {
  const manual = await seedContext(dialect);
  const eager = await seedContext(dialect);
  const a = await startServer(manual.tdb, workers, { ENRICHMENT: 'manual' });
  const b = await startServer(eager.tdb, workers, { ENRICHMENT: 'on-create', ENRICH_POLL_MS: '100' });
  try {
    const body = JSON.stringify({ fields: { $name: 'Bench account', $website: ['https://10.0.0.1'] } });
    const opts = (secret: string) => ({ method: 'POST', headers: { authorization: `Bearer ${secret}`, ...VERSION }, body });
    const r = await pairedRounds(
      () => load(`${a.url}/v1/accounts`, opts(manual.ctx.secret)),
      () => load(`${b.url}/v1/accounts`, opts(eager.ctx.secret)),
    );
    const runs = await eager.tdb.db.kysely
      .selectFrom('enrichment_runs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    console.log(
      `account creates, ENRICHMENT=on-create vs manual [${dialect}/${workers}]: ${Math.round(r.rps)} against ${r.referenceRps.join(', ')} req/s; ratio ${r.ratio.toFixed(2)} (rounds ${r.ratios.map((x) => x.toFixed(2)).join(', ')}); p50 ${r.p50} ms; runs queued ${Number(runs.n)}; non-2xx ${r.non2xx}, errors ${r.errors}`,
    );
  } finally {
    await stop(a.child);
    await stop(b.child);
    await manual.tdb.drop();
    await eager.tdb.drop();
  }
}

if (args.only !== 'create') await toolCall();
if (args.only !== 'mcp') await onCreate();
