import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  BlobNotFoundError,
  BlobSizeError,
  BlobTooLargeError,
  contentDisposition,
  createBlobStore,
  InvalidBlobKeyError,
  sanitizeFilename,
  type BlobStore,
} from '../../src/blobs/index.ts';
import { ACCESS_KEY, startTestS3, type TestS3 } from '../helpers/s3-server.ts';

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');
const body = (b: Buffer | string): Readable => Readable.from([Buffer.from(b)]);
const MB = 1024 * 1024;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A stream of `total` varied bytes made chunk by chunk, never held in memory.
 * Chunks come from a ring of buffers refilled on reuse, so the generator
 * itself makes no garbage: fresh 64 KiB buffers would pile up as external
 * memory until V8's ~64 MB external-allocation GC trigger and swamp the RSS
 * measurement. The ring (4 MiB) is far larger than the bytes a backpressured
 * pipeline holds in flight; the read-back md5 check would catch it if not.
 */
function generated(total: number, chunkSize = 64 * 1024) {
  const ring = Array.from({ length: 64 }, () => Buffer.alloc(chunkSize));
  const hash = createHash('md5');
  let produced = 0;
  let n = 0;
  const stream = new Readable({
    read() {
      if (produced >= total) return void this.push(null);
      const buf = ring[n++ % ring.length]!.subarray(0, Math.min(chunkSize, total - produced)).fill(`${produced}:`);
      produced += buf.length;
      hash.update(buf);
      this.push(buf);
    },
  });
  let digest: string | undefined;
  return { stream, produced: () => produced, md5: () => (digest ??= hash.digest('hex')) };
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

interface Backend {
  store: BlobStore;
  /** Every stored object/file, so tests can prove nothing was left behind. */
  leftovers(): Promise<string[]>;
  /** What `leftovers()` shows for a given key. */
  entryFor(key: string): string;
  teardown(): Promise<void>;
}

async function diskBackend(): Promise<Backend> {
  const dir = await mkdtemp(path.join(tmpdir(), 'blobs-disk-'));
  const root = path.join(dir, 'root');
  return {
    store: await createBlobStore({ kind: 'disk', dir: root }),
    leftovers: () => listFiles(dir), // the whole temp dir, not just the root
    entryFor: (key) => path.join('root', `${key}.blob`),
    teardown: () => rm(dir, { recursive: true, force: true }),
  };
}

async function s3Backend(): Promise<Backend> {
  const dir = await mkdtemp(path.join(tmpdir(), 'blobs-s3-'));
  const spoolDir = path.join(dir, 'spool');
  await mkdir(spoolDir);
  const s3: TestS3 = await startTestS3(path.join(dir, 's3rver'), 'test');
  const common = { region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true };
  const creds = { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY };
  const store = await createBlobStore({ kind: 's3', bucket: 'test', prefix: 'pfx/', spoolDir, ...common, ...creds });
  const lister = new S3Client({ ...common, credentials: creds });
  return {
    store,
    leftovers: async () => {
      const listed = await lister.send(new ListObjectsV2Command({ Bucket: 'test' }));
      const objects = (listed.Contents ?? []).map((o) => `s3:${o.Key}`);
      return [...objects, ...(await listFiles(spoolDir))].sort();
    },
    entryFor: (key) => `s3:pfx/${key}`,
    teardown: async () => {
      lister.destroy();
      await store.close();
      await s3.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

for (const [name, make] of [
  ['disk', diskBackend],
  ['s3', s3Backend],
] as const) {
  describe(`blob store: ${name}`, () => {
    let b: Backend;
    before(async () => {
      b = await make();
    });
    after(() => b.teardown());

    it('reports itself usable', async () => {
      assert.equal(b.store.kind, name);
      await b.store.ping();
    });

    it('round-trips bytes with size and md5', async () => {
      const data = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 31) % 251));
      const stat = await b.store.put('ws_a/fil_1', body(data), { maxBytes: data.length, contentType: 'image/png' });
      assert.deepEqual(stat, { size: data.length, md5: md5(data) });
      assert.deepEqual(await b.store.stat('ws_a/fil_1'), stat);
      assert.equal(await b.store.size('ws_a/fil_1'), data.length);
      assert.deepEqual(await readAll(await b.store.read('ws_a/fil_1')), data);
    });

    it('stores empty blobs', async () => {
      const stat = await b.store.put('ws_a/empty', body(''), { maxBytes: 0 });
      assert.deepEqual(stat, { size: 0, md5: md5(Buffer.alloc(0)) });
      assert.deepEqual(await b.store.stat('ws_a/empty'), stat);
      assert.equal(await b.store.size('ws_a/empty'), 0);
      assert.equal((await readAll(await b.store.read('ws_a/empty'))).length, 0);
    });

    it('reads inclusive ranges and refuses unsatisfiable ones', async () => {
      const data = Buffer.from('0123456789abcdefghij');
      await b.store.put('ws_a/range', body(data), { maxBytes: 100 });
      const slice = async (start: number, end: number) => (await readAll(await b.store.read('ws_a/range', { start, end }))).toString();
      // Not 0-0: s3rver 3.7 ignores a range ending at byte 0 (real S3 does not).
      assert.equal(await slice(0, 1), '01');
      assert.equal(await slice(19, 19), 'j');
      assert.equal(await slice(10, 19), 'abcdefghij');
      assert.equal(await slice(5, 7), '567');
      await assert.rejects(b.store.read('ws_a/range', { start: 15, end: 20 }), RangeError);
      await assert.rejects(b.store.read('ws_a/range', { start: 20, end: 25 }), RangeError);
      await assert.rejects(b.store.read('ws_a/range', { start: 5, end: 4 }), RangeError);
    });

    it('refuses, before any byte, a read whose recorded size the object does not have', async () => {
      const data = Buffer.from('0123456789abcdefghij');
      await b.store.put('ws_a/sized', body(data), { maxBytes: 100 });
      assert.equal(await b.store.size('ws_a/sized'), 20);
      assert.deepEqual(await readAll(await b.store.read('ws_a/sized', undefined, { size: 20 })), data);
      assert.equal((await readAll(await b.store.read('ws_a/sized', { start: 5, end: 7 }, { size: 20 }))).toString(), '567');
      const sizeError = (found: number | null) => (err: unknown) => err instanceof BlobSizeError && err.found === found;
      await assert.rejects(b.store.read('ws_a/sized', undefined, { size: 24 }), sizeError(20));
      await assert.rejects(b.store.read('ws_a/sized', undefined, { size: 4 }), sizeError(20));
      await assert.rejects(b.store.read('ws_a/sized', { start: 1, end: 2 }, { size: 24 }), sizeError(20));
      // A range the recorded size holds and the object does not: shorter than recorded.
      await assert.rejects(b.store.read('ws_a/sized', { start: 21, end: 23 }, { size: 24 }), BlobSizeError);
    });

    it('reports absent keys', async () => {
      assert.equal(await b.store.stat('ws_a/missing'), null);
      assert.equal(await b.store.size('ws_a/missing'), null);
      assert.equal(await b.store.size('ws_nope/missing'), null);
      await assert.rejects(b.store.read('ws_a/missing'), BlobNotFoundError);
      await assert.rejects(b.store.read('ws_nope/missing', { start: 0, end: 0 }), BlobNotFoundError);
    });

    it('accepts exactly maxBytes', async () => {
      const stat = await b.store.put('ws_a/exact', body('12345'), { maxBytes: 5 });
      assert.equal(stat.size, 5);
    });

    it('refuses oversize bodies early, keeps the previous object, leaves nothing behind', async () => {
      const key = 'ws_b/fil_big';
      const v1 = Buffer.from('version one');
      const v1stat = await b.store.put(key, body(v1), { maxBytes: 1000 });
      const before = await b.leftovers();
      assert.ok(before.includes(b.entryFor(key)), `${b.entryFor(key)} in ${before.join(', ')}`);

      const gen = generated(100 * MB);
      await assert.rejects(b.store.put(key, gen.stream, { maxBytes: MB }), BlobTooLargeError);
      assert.ok(gen.produced() < 8 * MB, `stopped reading after ${gen.produced()} bytes`);
      assert.deepEqual(await b.store.stat(key), v1stat);
      assert.deepEqual(await readAll(await b.store.read(key)), v1);
      assert.deepEqual(await b.leftovers(), before);

      await assert.rejects(b.store.put('ws_b/fil_new', body('123456'), { maxBytes: 5 }), BlobTooLargeError);
      assert.equal(await b.store.stat('ws_b/fil_new'), null);
      assert.deepEqual(await b.leftovers(), before);
    });

    it('leaves nothing behind when the source stream fails', async () => {
      const before = await b.leftovers();
      const failing = Readable.from(
        (async function* () {
          yield Buffer.from('partial');
          throw new Error('client went away');
        })(),
      );
      await assert.rejects(b.store.put('ws_b/fil_fail', failing, { maxBytes: MB }), /client went away/);
      assert.equal(await b.store.stat('ws_b/fil_fail'), null);
      assert.deepEqual(await b.leftovers(), before);
    });

    it('replaces on a second put', async () => {
      await b.store.put('ws_c/fil', body('first'), { maxBytes: 100 });
      const stat = await b.store.put('ws_c/fil', body('second!'), { maxBytes: 100 });
      assert.deepEqual(stat, { size: 7, md5: md5(Buffer.from('second!')) });
      assert.equal((await readAll(await b.store.read('ws_c/fil'))).toString(), 'second!');
      assert.equal((await b.leftovers()).filter((f) => f.includes('ws_c')).length, 1);
    });

    it('deletes idempotently', async () => {
      await b.store.put('ws_d/fil', body('bye'), { maxBytes: 10 });
      await b.store.delete('ws_d/fil');
      assert.equal(await b.store.stat('ws_d/fil'), null);
      await b.store.delete('ws_d/fil');
      await b.store.delete('ws_never/seen');
    });

    it('refuses keys that could escape or alias', async () => {
      const bad = ['', '../x', 'ws/../../etc/passwd', '/etc/passwd', 'a//b', 'a/', './a', '.hidden', 'a\0b', 'a\\b', 'a/..', 'a b', 'x'.repeat(600)];
      for (const key of bad) {
        await assert.rejects(b.store.put(key, body('x'), { maxBytes: 10 }), InvalidBlobKeyError, JSON.stringify(key));
        await assert.rejects(b.store.stat(key), InvalidBlobKeyError);
        await assert.rejects(b.store.read(key), InvalidBlobKeyError);
        await assert.rejects(b.store.delete(key), InvalidBlobKeyError);
      }
    });
  });
}

describe('disk store specifics', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'blobs-disk2-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('never writes outside its root and has no presigning', async () => {
    const store = await createBlobStore({ kind: 'disk', dir: path.join(dir, 'root') });
    for (const key of ['../escaped', '../../escaped', '/tmp/escaped', 'a/../../escaped']) {
      await assert.rejects(store.put(key, body('x'), { maxBytes: 10 }), InvalidBlobKeyError);
    }
    await store.put('ok/key', body('x'), { maxBytes: 10 });
    assert.deepEqual(await listFiles(dir), [path.join('root', 'ok', 'key.blob')]);
    assert.ok(!('presignPut' in store) || store.presignPut === undefined);
    assert.ok(!('presignGet' in store) || store.presignGet === undefined);
  });

  it('removes temp files of puts that died, once untouched long enough, and nothing else', async () => {
    const root = path.join(dir, 'stale');
    const store = await createBlobStore({ kind: 'disk', dir: root });
    await store.put('ws_a/fil_kept', body('kept'), { maxBytes: 10 });
    await mkdir(path.join(root, 'ws_a'), { recursive: true });
    const dead = path.join(root, 'ws_a', '.fil_dead.blob.1234.tmp');
    const live = path.join(root, 'ws_a', '.fil_live.blob.5678.tmp');
    await writeFile(dead, 'partial');
    await writeFile(live, 'still arriving');
    const hourAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(dead, hourAgo, hourAgo);
    assert.equal(await store.removeStaleTemp(Date.now() - 3600_000), 1);
    assert.deepEqual((await listFiles(root)).sort(), [path.join('ws_a', '.fil_live.blob.5678.tmp'), path.join('ws_a', 'fil_kept.blob')]);
    assert.deepEqual(await store.stat('ws_a/fil_kept'), { size: 4, md5: createHash('md5').update('kept').digest('hex') });
  });

  // Disk only: s3rver writes objects in place, so it is not atomic itself.
  it('concurrent puts to one key leave exactly one whole version', async () => {
    const store = await createBlobStore({ kind: 'disk', dir: path.join(dir, 'race') });
    const versions = ['a', 'bb', 'ccc', 'dddd', 'eeeee'].map((v) => v.repeat(50_000));
    await Promise.all(versions.map((v) => store.put('ws_c/fil', body(v), { maxBytes: MB })));
    const final = (await readAll(await store.read('ws_c/fil'))).toString();
    assert.ok(versions.includes(final));
    assert.deepEqual(await store.stat('ws_c/fil'), { size: final.length, md5: md5(Buffer.from(final)) });
    assert.deepEqual(await listFiles(path.join(dir, 'race')), [path.join('ws_c', 'fil.blob')]);
  });

  it('streams 200 MB with flat memory', async () => {
    const store = await createBlobStore({ kind: 'disk', dir: path.join(dir, 'mem') });
    const gen = generated(200 * MB);
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
    try {
      const stat = await store.put('ws_m/big', gen.stream, { maxBytes: 200 * MB });
      assert.deepEqual(stat, { size: 200 * MB, md5: gen.md5() });
    } finally {
      clearInterval(timer);
    }
    assert.ok(peak - baseline < 64 * MB, `RSS grew by ${((peak - baseline) / MB).toFixed(1)} MB`);
    assert.deepEqual(await store.stat('ws_m/big'), { size: 200 * MB, md5: gen.md5() });
    const reread = createHash('md5');
    for await (const chunk of await store.read('ws_m/big')) reread.update(chunk as Buffer);
    assert.equal(reread.digest('hex'), gen.md5());
  });
});

describe('s3 store specifics', () => {
  let b: Backend;
  before(async () => {
    b = await s3Backend();
  });
  after(() => b.teardown());

  it('presignPut: the URL accepts exactly the signed length and type', async () => {
    const data = Buffer.from('uploaded straight to S3');
    const presign = (key: string) => b.store.presignPut!(key, { contentType: 'text/plain', contentLength: data.length, expiresInSeconds: 300 });
    const { url, headers } = await presign('ws_p/fil');
    assert.deepEqual(headers, { 'content-type': 'text/plain' });
    const signed = new URL(url).searchParams.get('X-Amz-SignedHeaders')?.split(';');
    assert.ok(signed?.includes('content-length') && signed.includes('content-type'), String(signed));

    const longer = await fetch(url, { method: 'PUT', headers, body: Buffer.concat([data, Buffer.from('!')]) });
    assert.equal(longer.status, 403);
    const shorter = await fetch(url, { method: 'PUT', headers, body: data.subarray(1) });
    assert.equal(shorter.status, 403);
    const otherType = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/html' }, body: data });
    assert.equal(otherType.status, 403);
    assert.equal(await b.store.stat('ws_p/fil'), null);

    const ok = await fetch(url, { method: 'PUT', headers, body: data });
    assert.equal(ok.status, 200, await ok.text());
    assert.deepEqual(await b.store.stat('ws_p/fil'), { size: data.length, md5: md5(data) });
  });

  it('presignGet: the URL downloads the bytes with our disposition and type', async () => {
    const data = Buffer.from('%PDF-1.7 not really');
    await b.store.put('ws_p/doc', body(data), { maxBytes: 100 });
    const filename = 'Résumé "final" ‮fdp.exe';
    const url = await b.store.presignGet!('ws_p/doc', { expiresInSeconds: 60, filename, contentType: 'application/pdf' });
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), data);
    assert.equal(res.headers.get('content-disposition'), contentDisposition(filename));
    assert.equal(res.headers.get('content-type'), 'application/pdf');
  });

  it('copy: a server-side copy with its own size and MD5; false for an absent source', async () => {
    const data = Buffer.from('bytes to keep');
    await b.store.put('ws_c/src', body(data), { maxBytes: 100 });
    assert.equal(await b.store.copy!('ws_c/src', 'ws_c/dst'), true);
    await b.store.put('ws_c/src', body(Buffer.from('later')), { maxBytes: 100 });
    assert.deepEqual(await b.store.stat('ws_c/dst'), { size: data.length, md5: md5(data) });
    assert.equal(await b.store.copy!('ws_c/absent', 'ws_c/other'), false);
    assert.equal(await b.store.stat('ws_c/other'), null);
  });

  it('refuses presign lifetimes S3 would reject', async () => {
    await assert.rejects(b.store.presignGet!('ws_p/doc', { expiresInSeconds: 0, filename: 'a', contentType: 'x/y' }), RangeError);
    const opts = { contentType: 'x/y', contentLength: 1, expiresInSeconds: 8 * 24 * 3600 };
    await assert.rejects(b.store.presignPut!('ws_p/doc', opts), RangeError);
  });
});

describe('contentDisposition', () => {
  const cases: [string, string][] = [
    ['report.pdf', 'attachment; filename="report.pdf"'],
    ['../../etc/passwd', 'attachment; filename=".._.._etc_passwd"'],
    ['..\\..\\boot.ini', 'attachment; filename=".._.._boot.ini"'],
    ['a\0b\r\nSet-Cookie: x=1', 'attachment; filename="a_b__Set-Cookie: x=1"'],
    ['evil\u202Egpj.exe', 'attachment; filename="evil_gpj.exe"'],
    ['say "hi" 100%.txt', `attachment; filename="say _hi_ 100_.txt"; filename*=UTF-8''say%20%22hi%22%20100%25.txt`],
    ['résumé.pdf', `attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`],
    ["it's (1)*.txt", `attachment; filename="it's (1)*.txt"`],
    ["it's é.txt", `attachment; filename="it's _.txt"; filename*=UTF-8''it%27s%20%C3%A9.txt`],
    ['😀.txt', `attachment; filename="_.txt"; filename*=UTF-8''%F0%9F%98%80.txt`],
    ['\uD800x', `attachment; filename="_x"; filename*=UTF-8''%EF%BF%BDx`],
    ['', 'attachment; filename="download"'],
    ['..', 'attachment; filename="download"'],
    [' \u200B ', 'attachment; filename="_"'],
  ];
  for (const [input, expected] of cases) {
    it(`builds a safe header for ${JSON.stringify(input)}`, () => {
      assert.equal(contentDisposition(input), expected);
    });
  }

  it('supports inline and caps names at 255 characters', () => {
    assert.equal(contentDisposition('a.png', 'inline'), 'inline; filename="a.png"');
    assert.equal(contentDisposition('a'.repeat(300)), `attachment; filename="${'a'.repeat(255)}"`);
    const wide = contentDisposition('é'.repeat(255));
    assert.ok(wide.endsWith(`filename*=UTF-8''${'%C3%A9'.repeat(255)}`));
  });

  it('only ever emits printable ASCII in a well-formed header', () => {
    const shape = /^attachment; filename="([^"\\%]+)"(?:; filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]+))?$/;
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (name) => {
        const header = contentDisposition(name);
        const m = shape.exec(header);
        assert.ok(m && /^[\x20-\x7e]+$/.test(header), header);
        const full = m[2] === undefined ? m[1]! : decodeURIComponent(m[2]);
        assert.equal(full, sanitizeFilename(name));
        // eslint-disable-next-line no-control-regex -- asserting that none survive
        assert.ok(!/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069/\\]/.test(full), full);
      }),
      { numRuns: 2000 },
    );
  });
});
