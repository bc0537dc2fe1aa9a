// Files benchmark: one 512 MB file through create → PUT → complete (with MD5) → download against
// the real server (a child process, local disk blobs, SQLite). Baseline, measured in the same run
// on the same file: `md5sum` plus a plain disk copy (cp, then sync of the copy, since the server
// fsyncs before answering). Passes when upload throughput ≥ 70% of the baseline's and the
// server's resident memory grows by less than 64 MB.
//   node bench/files-upload.ts [--mb 512] [--dir /path/on/the/disk/to/test]
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey } from '../src/auth/service.ts';
import { openDb } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createUser } from '../src/users/service.ts';
import { startServerProcess } from '../test/helpers/process.ts';
import { systemCtx, operatorCtx } from '../src/lib/context.ts';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '512' }, dir: { type: 'string' } } });
const MB = 1024 * 1024;
const execFileAsync = promisify(execFile);
const size = Number(values.mb) * MB;
const root = mkdtempSync(join(values.dir ?? tmpdir(), 'rolodex-bench-files-'));
const dataDir = join(root, 'data');
const source = join(root, 'source.bin');
mkdirSync(dataDir);

const seconds = (fn: () => void) => {
  const t0 = performance.now();
  fn();
  return (performance.now() - t0) / 1000;
};
const mbps = (bytes: number, s: number) => (bytes / MB / s).toFixed(0);

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function main(): Promise<void> {
  // Random bytes, so nothing along the way can compress or dedupe them.
  const fd = openSync(source, 'w');
  for (let done = 0; done < size; done += 8 * MB) writeSync(fd, randomBytes(Math.min(8 * MB, size - done)));
  closeSync(fd);
  execFileSync('sync');

  const md5Time = seconds(() => execFileSync('md5sum', [source]));
  const digest = execFileSync('md5sum', [source]).toString().split(' ')[0] as string;
  const copy = join(root, 'copy.bin');
  const copyTime = seconds(() => {
    execFileSync('cp', [source, copy]);
    execFileSync('sync', [copy]);
  });
  rmSync(copy);
  const baseline = md5Time + copyTime;

  const db = openDb({ dataDir });
  await migrate(db);
  const ws = await createWorkspace(systemCtx(db.kysely), { name: 'bench' });
  const user = await createUser(operatorCtx(db.kysely, ws.id), { email: 'bench@example.test', role: 'admin' });
  const secret = (await createKey(operatorCtx(db.kysely, ws.id), { userId: user.id, scopes: null, expiresInMs: null })).secret;
  await db.close();

  const server = await startServerProcess({
    DATA_DIR: dataDir,
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
    RATE_LIMIT_WRITE: '0',
    RATE_LIMIT_READ: '0',
    RATE_LIMIT_SEARCH: '0',
  });
  const pid = server.child.pid as number;
  const headers = { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.baseUrl + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    // Warm-up: one small file through the whole flow, so code paths are loaded before measuring.
    const w = await api('POST', '/v1/files', { filename: 'warm', mimeType: 'application/octet-stream', sizeBytes: 1024 });
    await fetch(w.uploadUrl, { method: 'PUT', headers: w.uploadHeaders, body: Buffer.alloc(1024) });
    await api('POST', `/v1/files/${w.id}/complete`, {});

    const rssBefore = rssKb(pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssKb(pid))), 20);

    const f = await api('POST', '/v1/files', { filename: 'big.bin', mimeType: 'application/octet-stream', sizeBytes: size });
    const t0 = performance.now();
    // curl as the client: a real uploader, and one whose own CPU use barely competes with the server.
    const status = Number(
      (
        await execFileAsync('curl', [
          '-s',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-T',
          source,
          ...Object.entries(f.uploadHeaders).flatMap(([k, v]) => ['-H', `${k}: ${String(v)}`]),
          f.uploadUrl,
        ])
      ).stdout,
    );
    const uploadTime = (performance.now() - t0) / 1000;
    const rssAfterUpload = rssPeak;
    if (status !== 200) throw new Error(`PUT answered ${status}`);
    const t1 = performance.now();
    await api('POST', `/v1/files/${f.id}/complete`, { md5: digest });
    const completeTime = (performance.now() - t1) / 1000;
    const { url } = await api('GET', `/v1/files/${f.id}/url`);
    const t2 = performance.now();
    const res = await fetch(url);
    const hash = createHash('md5');
    let got = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      got += chunk.length;
    }
    const downloadTime = (performance.now() - t2) / 1000;
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, rssKb(pid));
    if (got !== size || hash.digest('hex') !== digest) throw new Error('downloaded bytes differ');

    const growthMb = (rssPeak - rssBefore) / 1024;
    const ratio = baseline / uploadTime;
    const lines = [
      `file: ${size / MB} MB random bytes in ${root}`,
      `baseline  md5sum ${md5Time.toFixed(2)} s + cp&sync ${copyTime.toFixed(2)} s = ${baseline.toFixed(2)} s (${mbps(size, baseline)} MB/s)`,
      `upload    PUT ${uploadTime.toFixed(2)} s (${mbps(size, uploadTime)} MB/s), throughput ${(ratio * 100).toFixed(0)}% of baseline (needs ≥ 70%)`,
      `complete  ${(completeTime * 1000).toFixed(0)} ms (size and MD5 checked against the stored object)`,
      `download  ${downloadTime.toFixed(2)} s (${mbps(size, downloadTime)} MB/s), MD5 verified`,
      `server RSS ${(rssBefore / 1024).toFixed(0)} MB before, peak ${(rssAfterUpload / 1024).toFixed(0)} MB during the upload, ${(rssPeak / 1024).toFixed(0)} MB overall: growth ${growthMb.toFixed(1)} MB (needs < 64 MB)`,
      ratio >= 0.7 && growthMb < 64 ? 'PASS' : 'FAIL',
    ];
    console.log(lines.join('\n'));
    if (!(ratio >= 0.7 && growthMb < 64)) process.exitCode = 1;
  } finally {
    await server.stop('SIGTERM');
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
