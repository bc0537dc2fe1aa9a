// Why uploads run a forced minor GC (src/files/reclaim.ts). A plain node:http server in a child
// process streams one upload (curl -T, --mb MB of random bytes) through a PassThrough into a file,
// as src/files/byte-routes.ts does, once as is and once counting the bytes with reclaimer().
// Sampled every 20 ms: resident memory and the bytes held by ArrayBuffers (the chunks). At the
// end, before and after one full GC with nothing else changed: the chunks a GC frees were held
// by nothing, only not yet collected.
//   node bench/upload-memory.ts [--mb 256]
import { execFile, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync, createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs, promisify } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { reclaimer } from '../src/files/reclaim.ts';

const MB = 1024 * 1024;
const mb = (bytes: number) => (bytes / MB).toFixed(1);

interface Report {
  mode: string;
  rssBefore: number;
  rssPeak: number;
  buffersPeak: number;
  buffersEnd: number;
  buffersAfterGc: number;
  rssAfterGc: number;
}

/** The child: one server, one upload, then a report to the parent. */
async function serve(mode: string, dir: string): Promise<void> {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  let peak = { rss: 0, buffers: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak = { rss: Math.max(peak.rss, m.rss), buffers: Math.max(peak.buffers, m.arrayBuffers) };
  };
  const server = createServer((req, res) => {
    const body = new PassThrough();
    req.pipe(body);
    if (mode === 'reclaim') {
      const reclaim = reclaimer();
      req.on('data', (chunk: Buffer) => reclaim(chunk.length));
    }
    void pipeline(body, createWriteStream(join(dir, 'upload.bin'))).then(() => {
      res.end('ok');
      const end = process.memoryUsage();
      gc();
      const after = process.memoryUsage();
      process.send?.({
        mode,
        rssBefore,
        rssPeak: peak.rss,
        buffersPeak: peak.buffers,
        buffersEnd: end.arrayBuffers,
        buffersAfterGc: after.arrayBuffers,
        rssAfterGc: after.rss,
      } satisfies Report);
    });
  });
  gc();
  const rssBefore = process.memoryUsage().rss;
  setInterval(sample, 20).unref();
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
  process.once('disconnect', () => process.exit(0));
}

async function measure(mode: string, dir: string, source: string): Promise<Report> {
  const child = fork(new URL(import.meta.url).pathname, ['--child', mode, '--dir', dir], { execArgv: [] });
  const [{ port }] = (await once(child, 'message')) as [{ port: number }];
  const report = once(child, 'message') as Promise<[Report]>;
  await promisify(execFile)('curl', ['-s', '-o', '/dev/null', '-T', source, `http://127.0.0.1:${port}/`]);
  const [r] = await report;
  child.disconnect();
  return r;
}

const { values: args } = parseArgs({ options: { mb: { type: 'string', default: '256' }, child: { type: 'string' }, dir: { type: 'string' } } });
if (args.child) await serve(args.child, args.dir!);
else {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-upload-memory-'));
  try {
    const source = join(dir, 'source.bin');
    const fd = openSync(source, 'w');
    for (let done = 0; done < Number(args.mb) * MB; done += 8 * MB) writeSync(fd, randomBytes(8 * MB));
    closeSync(fd);
    console.log(`${args.mb} MB upload through node:http into a file; memory sampled every 20 ms`);
    for (const mode of ['plain', 'reclaim', 'plain', 'reclaim']) {
      const r = await measure(mode, dir, source);
      console.log(
        `${r.mode.padEnd(8)} RSS +${mb(r.rssPeak - r.rssBefore)} MB at peak; ArrayBuffers ${mb(r.buffersPeak)} MB at peak, ${mb(r.buffersEnd)} MB at the end, ${mb(r.buffersAfterGc)} MB after one full GC`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
