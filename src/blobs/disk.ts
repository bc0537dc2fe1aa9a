import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, constants, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { removeStaleFiles } from './stale.ts';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertValidKey,
  assertValidRange,
  BlobCorruptError,
  BlobDiskFaultError,
  BlobNotFoundError,
  BlobSizeError,
  InvalidBlobKeyError,
  type BlobRange,
  type BlobStat,
  type BlobStore,
  type PutOptions,
} from './blob-store.ts';
import { MeterStream } from './meter.ts';
import { makeDirectory } from '../lib/directories.ts';

/*
 * Layout: key `ws_x/fil_y` lives at `<root>/ws_x/fil_y.blob`: the raw bytes
 * followed by a fixed 64-byte ASCII trailer holding size and MD5. Keeping the
 * metadata in the same file (rather than a sidecar) means one rename publishes
 * data and metadata together, so a crash can never pair new bytes with an old
 * checksum, and stat() reads 64 bytes instead of hashing the blob. A trailer
 * rather than a header because it can be written in the same single pass.
 * Temp files are `.<name>.<uuid>.tmp` next to the target: same filesystem, so
 * rename is atomic, and the leading dot keeps them outside the key space.
 */
const TRAILER_LEN = 64;
const TRAILER_RE = /^RLDXBLOB1 ([0-9a-f]{32}) ([0-9a-f]{16}) *\n$/;
const SUFFIX = '.blob';

function encodeTrailer(stat: BlobStat): Buffer {
  const text = `RLDXBLOB1 ${stat.md5} ${stat.size.toString(16).padStart(16, '0')}`;
  return Buffer.from(text.padEnd(TRAILER_LEN - 1, ' ') + '\n', 'latin1');
}

async function readTrailer(handle: FileHandle, key: string): Promise<BlobStat> {
  const fileSize = (await handle.stat()).size;
  const buf = Buffer.alloc(TRAILER_LEN);
  const { bytesRead } = fileSize >= TRAILER_LEN ? await handle.read(buf, 0, TRAILER_LEN, fileSize - TRAILER_LEN) : { bytesRead: 0 };
  const match = bytesRead === TRAILER_LEN ? TRAILER_RE.exec(buf.toString('latin1')) : null;
  const size = match ? parseInt(match[2]!, 16) : -1;
  if (!match || size !== fileSize - TRAILER_LEN) throw new BlobCorruptError(key);
  return { size, md5: match[1]! };
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  // ENOTDIR: a path component is a file, so the key cannot exist either.
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/*
 * The file system's own failures: the machine's, never the key's nor the client's. The same call
 * succeeds once an operator mends them, so they leave the store as BlobDiskFaultError (503, logged
 * naming the directory; docs/reliability.md §Blob store). An upload that fails on them is no
 * interrupted upload, whatever the pipeline then did to the request's stream.
 */
const FAULTS: Record<string, string> = {
  EACCES: 'this process may not use it (its owner or mode)',
  EPERM: 'this process may not use it (its owner or mode)',
  EROFS: 'its file system is read-only',
  ENOSPC: 'its disk is full',
  EDQUOT: 'its disk quota is used up',
  EIO: 'its disk failed to read or write',
  EMFILE: 'this process has too many files open',
  ENFILE: 'the system has too many files open',
};

function asFault(err: unknown, root: string): unknown {
  const { code, path: where } = (err ?? {}) as NodeJS.ErrnoException;
  if (!code || !Object.hasOwn(FAULTS, code)) return err;
  return new BlobDiskFaultError(`${root}: ${FAULTS[code]} (${code}${where ? ` on ${where}` : ''}; DATA_DIR)`, { cause: err });
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * mkdir -p, each directory its owner's alone (0700), then fsync the parent of every directory it
 * created so they survive a crash. Blobs are the files' bytes: other users of the machine read
 * none of them (docs/deploy.md §The data directory's modes).
 */
async function ensureDir(dir: string): Promise<void> {
  const firstCreated = await makeDirectory(dir, 0o700);
  if (firstCreated === undefined) return;
  for (let d = dir; ; d = path.dirname(d)) {
    await fsyncDir(path.dirname(d));
    if (d === firstCreated || d === path.dirname(d)) break;
  }
}

export function createDiskBlobStore(rootDir: string): BlobStore {
  const root = path.resolve(rootDir);

  function fileFor(key: string): string {
    const segments = assertValidKey(key);
    // `a.blob/x` would make a directory named like the file for key `a`.
    if (segments.slice(0, -1).some((s) => s.endsWith(SUFFIX))) {
      throw new InvalidBlobKeyError(`directory segment ends with ${SUFFIX}`);
    }
    const file = path.join(root, ...segments) + SUFFIX;
    // Belt and braces: the key grammar already rules out escapes.
    if (!file.startsWith(root + path.sep)) throw new InvalidBlobKeyError('escapes root');
    return file;
  }

  async function openExisting(key: string): Promise<FileHandle | null> {
    try {
      return await open(fileFor(key), 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  const store: BlobStore = {
    kind: 'disk',

    async put(key: string, body: Readable | NodeJS.ReadableStream, opts: PutOptions): Promise<BlobStat> {
      const file = fileFor(key);
      const meter = new MeterStream(opts.maxBytes, encodeTrailer);
      const dir = path.dirname(file);
      await ensureDir(dir);
      const tmp = path.join(dir, `.${path.basename(file)}.${randomUUID()}.tmp`);
      let published = false;
      try {
        // flush: fsync before close, and pipeline waits for close. Up to 1 MiB buffered: the pieces
        // that arrive while one write is out go in the next as one, and the socket is not paused
        // for each 64 KB piece (docs/performance.md §Uploads). Readable by its owner alone.
        await pipeline(body, meter, createWriteStream(tmp, { flags: 'wx', mode: 0o600, flush: true, highWaterMark: 1 << 20 }));
        await rename(tmp, file);
        published = true;
        await fsyncDir(dir);
        return meter.result();
      } finally {
        if (!published) await unlink(tmp).catch(() => {});
      }
    },

    async stat(key: string): Promise<BlobStat | null> {
      const handle = await openExisting(key);
      if (!handle) return null;
      try {
        return await readTrailer(handle, key);
      } finally {
        await handle.close();
      }
    },

    // What read() checks before it streams: the file, and its trailer.
    async size(key: string): Promise<number | null> {
      return (await store.stat(key))?.size ?? null;
    },

    // Reads from the descriptor opened here, so a concurrent replace or delete
    // cannot mix two versions: the caller gets the object as it was at open.
    async read(key: string, range?: BlobRange, expect?: { size: number }): Promise<Readable> {
      const handle = await openExisting(key);
      if (!handle) throw new BlobNotFoundError(key);
      try {
        const { size } = await readTrailer(handle, key);
        if (expect && size !== expect.size) throw new BlobSizeError(key, size);
        if (range) assertValidRange(range, size);
        else if (size === 0) {
          await handle.close();
          return Readable.from([]);
        }
        return handle.createReadStream({ start: range?.start ?? 0, end: range?.end ?? size - 1 });
      } catch (err) {
        await handle.close();
        throw err;
      }
    },

    async delete(key: string): Promise<void> {
      const file = fileFor(key);
      try {
        await unlink(file);
      } catch (err) {
        if (isMissing(err)) return;
        throw err;
      }
      await fsyncDir(path.dirname(file));
    },

    async ping(): Promise<void> {
      await ensureDir(root);
      await access(root, constants.R_OK | constants.W_OK | constants.X_OK);
    },

    removeStaleTemp: (before) => removeStaleFiles(root, /^\..+\.tmp$/, before, true),

    async close(): Promise<void> {},
  };
  const faulted = <R>(call: () => Promise<R>): Promise<R> =>
    call().catch((err: unknown) => {
      throw asFault(err, root);
    });
  return {
    ...store,
    put: (key, body, opts) => faulted(() => store.put(key, body, opts)),
    stat: (key) => faulted(() => store.stat(key)),
    size: (key) => faulted(() => store.size(key)),
    read: (key, range, expect) => faulted(() => store.read(key, range, expect)),
    delete: (key) => faulted(() => store.delete(key)),
    ping: () => faulted(() => store.ping()),
  };
}
