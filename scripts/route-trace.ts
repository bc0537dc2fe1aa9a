// `npm run structure -- [DIR] --route 'POST /v1/contacts' [--body JSON]`: the source files one
// request runs through. The checkout's real app is built in this process on a fresh SQLite file
// (test/helpers/app.ts), the request is sent twice to warm every cache, then once more under V8's
// precise coverage with call counts (node:inspector, Profiler): a file counts when one of its
// functions ran during that request. The principal files are those outside src/http/, src/lib/
// and src/db/ (the transport, the shared helpers and the database layer), listed in the order
// their first function was first entered: a worker thread's inspector session sets a one-shot
// breakpoint at the start of every principal function that ran and notes each as it is hit in a
// fourth run of the same request. The module edges among them (from the static imports) show
// whether the request goes in one direction.
import { Session } from 'node:inspector/promises';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

interface FunctionCoverage {
  functionName: string;
  ranges: Array<{ startOffset: number; endOffset: number; count: number }>;
}
interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: FunctionCoverage[];
}

export interface RouteTrace {
  /** Every src/ file with a function that ran. */
  all: string[];
  /** The principal files, in the order of their first call. */
  principal: string[];
  /** Module → modules it imports, among the principal files' modules. */
  edges: Map<string, Set<string>>;
}

const EXCLUDED = /^src\/(http|lib|db)\//;

/** The source files whose functions ran between two takes of the coverage, and those functions. */
function ran(result: ScriptCoverage[], dir: string): Map<string, { scriptId: string; url: string; fns: FunctionCoverage[] }> {
  const out = new Map<string, { scriptId: string; url: string; fns: FunctionCoverage[] }>();
  for (const s of result) {
    if (!s.url.startsWith('file://')) continue;
    const file = relative(dir, fileURLToPath(s.url));
    if (!file.startsWith('src/')) continue;
    // The first range of a function is the function itself; its count, the calls.
    const fns = s.functions.filter((f) => f.functionName !== '' || f.ranges[0]!.startOffset > 0).filter((f) => f.ranges[0]!.count > 0);
    if (fns.length > 0) out.set(file, { scriptId: s.scriptId, url: s.url, fns });
  }
  return out;
}

/** Line and column (0-based) of an offset in `text`. */
function position(text: string, offset: number): { lineNumber: number; columnNumber: number } {
  const before = text.slice(0, offset).split('\n');
  return { lineNumber: before.length - 1, columnNumber: before.at(-1)!.length };
}

// Runs in the worker: connected to the main thread's inspector, it sets the breakpoints it is sent
// and, whenever the main thread pauses on one, notes the file, removes the breakpoint and resumes.
const WORKER = `
const { parentPort } = require('node:worker_threads');
const { Session } = require('node:inspector');
const session = new Session();
session.connectToMainThread();
const post = (method, params) => new Promise((ok, ko) => session.post(method, params, (err, res) => (err ? ko(err) : ok(res))));
const hits = [];
const fileOf = new Map();
session.on('Debugger.paused', ({ params }) => {
  const id = params.hitBreakpoints && params.hitBreakpoints[0];
  if (id !== undefined && fileOf.has(id)) {
    hits.push(fileOf.get(id));
    fileOf.delete(id);
    session.post('Debugger.removeBreakpoint', { breakpointId: id });
  }
  session.post('Debugger.resume');
});
parentPort.on('message', async (msg) => {
  if (msg.type === 'set') {
    await post('Debugger.enable', {});
    for (const b of msg.breakpoints) {
      const found = await post('Debugger.getPossibleBreakpoints', { start: { scriptId: b.scriptId, ...b.start }, end: { scriptId: b.scriptId, ...b.end } });
      const at = found.locations[0];
      if (!at) continue;
      try {
        const { breakpointId } = await post('Debugger.setBreakpoint', { location: at });
        fileOf.set(breakpointId, b.file);
      } catch {}
    }
    parentPort.postMessage({ type: 'ready' });
  } else if (msg.type === 'done') {
    await post('Debugger.disable', {});
    parentPort.postMessage({ type: 'hits', hits });
  }
});
`;

function ask<T>(worker: Worker, message: unknown, answer: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (msg: { type: string } & T) => {
      if (msg.type !== answer) return;
      worker.off('message', on);
      resolve(msg);
    };
    worker.on('message', on);
    worker.once('error', reject);
    worker.postMessage(message);
  });
}

const moduleOf = (file: string) => file.split('/').slice(0, 2).join('/');

/** The route's request in `dir`'s checkout, traced; `imports` maps each src file to those it imports. */
export async function traceRoute(dir: string, route: string, body: unknown, imports: Map<string, string[]>): Promise<RouteTrace> {
  const [method, url] = route.trim().split(/\s+/) as [string, string];
  if (!method || !url?.startsWith('/')) throw new Error(`--route '${route}': METHOD /path`);
  const helpers = (await import(pathToFileURL(`${dir}/test/helpers/app.ts`).href)) as typeof import('../test/helpers/app.ts');
  const t = await helpers.buildTestApp('sqlite');
  const session = new Session();
  session.connect();
  const worker = new Worker(WORKER, { eval: true });
  try {
    const seeded = await helpers.seedWorkspace(t);
    const send = async () => {
      const res = await helpers.call(t, seeded.secret, method, url, method === 'GET' || method === 'DELETE' ? undefined : body);
      if (res.statusCode >= 400) throw new Error(`${route} answered ${res.statusCode}: ${res.body}`);
      // Work the answer starts after it is sent (after-commit work) counts too.
      await new Promise((r) => setImmediate(r));
    };
    await send();
    await send();
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage');
    await send();
    const { result } = (await session.post('Profiler.takePreciseCoverage')) as unknown as { result: ScriptCoverage[] };
    await session.post('Profiler.stopPreciseCoverage');
    const files = ran(result, dir);
    const principal = [...files.keys()].filter((f) => !EXCLUDED.test(f));

    const breakpoints = principal.flatMap((file) => {
      const { scriptId, fns } = files.get(file)!;
      const text = readFileSync(`${dir}/${file}`, 'utf8');
      return fns.map((f) => ({ file, scriptId, start: position(text, f.ranges[0]!.startOffset), end: position(text, f.ranges[0]!.endOffset) }));
    });
    await ask(worker, { type: 'set', breakpoints }, 'ready');
    await send();
    const { hits } = await ask<{ hits: string[] }>(worker, { type: 'done' }, 'hits');
    const ordered = [...new Set(hits)];
    for (const f of principal) if (!ordered.includes(f)) ordered.push(f);

    const modules = new Set(ordered.map(moduleOf));
    const edges = new Map<string, Set<string>>();
    for (const file of ordered)
      for (const to of imports.get(file) ?? []) {
        const [a, b] = [moduleOf(file), moduleOf(to)];
        if (a !== b && modules.has(b)) edges.set(a, (edges.get(a) ?? new Set()).add(b));
      }
    return { all: [...files.keys()].sort(), principal: ordered, edges };
  } finally {
    await worker.terminate();
    session.disconnect();
    await t.close();
  }
}

export function printTrace(route: string, trace: RouteTrace): void {
  console.log(`${route}: ${trace.principal.length} principal files (outside src/http, src/lib, src/db), ${trace.all.length} src files in all`);
  trace.principal.forEach((f, i) => console.log(`  ${String(i + 1).padStart(2)}. ${f}`));
  const both: string[] = [];
  for (const [a, tos] of trace.edges) for (const b of tos) if (a < b && trace.edges.get(b)?.has(a)) both.push(`${a} <-> ${b}`);
  console.log(`module imports among them: ${[...trace.edges].map(([a, tos]) => `${a} -> ${[...tos].sort().join(', ')}`).join('; ') || 'none'}`);
  console.log(`modules importing each other: ${both.length === 0 ? 'none (one direction)' : both.join('; ')}`);
  if (process.argv.includes('--list')) for (const f of trace.all) console.log(`  ran: ${f}`);
}
