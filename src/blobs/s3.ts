import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { removeStaleFiles } from './stale.ts';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertValidKey,
  BlobNotFoundError,
  BlobSizeError,
  type BlobRange,
  type BlobStat,
  type BlobStore,
  MAX_PRESIGN_SECONDS,
  type PresignedPut,
  type PresignGetOptions,
  type PresignPutOptions,
  type PutOptions,
} from './blob-store.ts';
import { contentDisposition } from './content-disposition.ts';
import { MeterStream } from './meter.ts';
import { errorStatus, isNotFound, missingBucket, storeError } from './s3-errors.ts';

export interface S3BlobStoreConfig {
  bucket: string;
  region: string;
  /** For S3-compatible stores (MinIO, R2, ...); omit for AWS. */
  endpoint?: string;
  /** Host clients use for presigned URLs when it differs from `endpoint` (e.g. inside Docker). */
  publicEndpoint?: string;
  forcePathStyle?: boolean;
  /** Omit both to use the SDK's default credential chain. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Prepended verbatim to every key, e.g. `rolodex/`. */
  prefix?: string;
  /** Where put() spools bodies before uploading; defaults to the OS temp dir. */
  spoolDir?: string;
}

/** The presigner's date: the caller's clock when it gives one, so the address ends when it says. */
const signingDate = (at: number | undefined): { signingDate?: Date } => (at === undefined ? {} : { signingDate: new Date(at) });

// The SDK waits for ever on a store that accepts connections but never answers (a stuck proxy,
// a black-holed address): an API request then hung until its client gave up, and the sweeper
// with it. A connection must be made within CONNECT_MS and a socket may stay silent for IDLE_MS;
// a call on an object's metadata (HEAD, DELETE) ends within ANSWER_MS, its retries included.
// Reads and writes of bytes have no overall limit: large bodies take as long as they take.
const CONNECT_MS = 5_000;
const IDLE_MS = 30_000;
const ANSWER_MS = 10_000;

function checkExpiry(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_PRESIGN_SECONDS) {
    throw new RangeError(`expiresInSeconds must be 1..${MAX_PRESIGN_SECONDS}`);
  }
}

export function createS3BlobStore(config: S3BlobStoreConfig): BlobStore {
  const { bucket, prefix = '' } = config;
  const clientConfig = (endpoint: string | undefined): S3ClientConfig => ({
    region: config.region,
    forcePathStyle: config.forcePathStyle ?? false,
    // The SDK's default CRC32 checksums break many S3-compatible stores and
    // would be baked into presigned URLs that browsers cannot satisfy.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(endpoint ? { endpoint } : {}),
    requestHandler: { connectionTimeout: CONNECT_MS, socketTimeout: IDLE_MS },
    ...(config.accessKeyId && config.secretAccessKey ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } } : {}),
  });
  const client = new S3Client(clientConfig(config.endpoint));
  // Presigning is offline, so a second client costs nothing but its config.
  const signer = config.publicEndpoint ? new S3Client(clientConfig(config.publicEndpoint)) : client;

  const objectKey = (key: string): string => prefix + assertValidKey(key).join('/');
  /** The options of a call on metadata: it ends within ANSWER_MS. */
  const briefly = () => ({ abortSignal: AbortSignal.timeout(ANSWER_MS) });
  const settings = { bucket, region: config.region };
  const translated = (err: unknown): unknown => storeError(err, settings);

  /**
   * Throws unless the bucket is there and takes the server's credentials. An answer to HEAD has no
   * body, so a 404 to an object's HEAD does not say whether the object or the bucket is missing:
   * the bucket's own HEAD tells them apart.
   */
  async function checkBucket(): Promise<void> {
    try {
      await client.send(new HeadBucketCommand({ Bucket: bucket }), briefly());
    } catch (err) {
      throw errorStatus(err) === 404 ? missingBucket(settings, err) : translated(err);
    }
  }

  /** The object's HEAD; null when the object is not there (and the bucket is). */
  async function headObject(key: string): Promise<HeadObjectCommandOutput | null> {
    try {
      return await client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) }), briefly());
    } catch (err) {
      if (!isNotFound(err)) throw translated(err);
      await checkBucket();
      return null;
    }
  }

  async function hashObject(key: string): Promise<BlobStat> {
    const hash = createHash('md5');
    let size = 0;
    for await (const chunk of await store.read(key)) {
      size += (chunk as Buffer).length;
      hash.update(chunk as Buffer);
    }
    return { size, md5: hash.digest('hex') };
  }

  const store: BlobStore = {
    kind: 's3',

    /*
     * Spool to a local temp file while counting and hashing, then one
     * PutObject with the exact Content-Length and Content-MD5. Why not stream
     * straight to S3: PutObject needs the length up front, and an aws-chunked
     * or multipart upload would let an oversize body start landing before we
     * can refuse it. Spooling refuses oversize bodies before S3 sees a byte,
     * keeps memory flat, makes the replace atomic (a single PUT), lets S3
     * verify the MD5 we computed, and keeps the ETag a plain MD5 for stat().
     * Cost: temp disk space up to maxBytes per concurrent upload. Large files
     * are expected to go client -> S3 through presignPut anyway.
     */
    async put(key: string, body: Readable | NodeJS.ReadableStream, opts: PutOptions): Promise<BlobStat> {
      const Key = objectKey(key);
      const meter = new MeterStream(opts.maxBytes);
      const spool = path.join(config.spoolDir ?? tmpdir(), `rolodex-blob-${randomUUID()}.tmp`);
      let upload: Readable | undefined;
      try {
        await pipeline(body, meter, createWriteStream(spool, { flags: 'wx', mode: 0o600 }));
        const stat = meter.result();
        upload = createReadStream(spool);
        await client
          .send(
            new PutObjectCommand({
              Bucket: bucket,
              Key,
              Body: upload,
              ContentLength: stat.size,
              ContentMD5: Buffer.from(stat.md5, 'hex').toString('base64'),
              ContentType: opts.contentType ?? 'application/octet-stream',
            }),
          )
          .catch((err: unknown) => {
            throw translated(err);
          });
        return stat;
      } finally {
        upload?.destroy();
        await unlink(spool).catch(() => {});
      }
    },

    async stat(key: string): Promise<BlobStat | null> {
      const head = await headObject(key);
      if (!head) return null;
      const etag = (head.ETag ?? '').replaceAll('"', '').toLowerCase();
      // Multipart ETags have a `-N` suffix; SSE-KMS and SSE-C ETags are
      // 32-hex but not an MD5 of the data, so only trust plain/SSE-S3 ones.
      const encrypted = (head.ServerSideEncryption ?? '').startsWith('aws:kms') || !!head.SSECustomerAlgorithm;
      if (/^[0-9a-f]{32}$/.test(etag) && !encrypted) return { size: head.ContentLength ?? 0, md5: etag };
      return hashObject(key);
    },

    // The object's HEAD alone: an encrypted object's stat would read it whole for its MD5.
    async size(key: string): Promise<number | null> {
      const head = await headObject(key);
      return head ? (head.ContentLength ?? 0) : null;
    },

    async read(key: string, range?: BlobRange, expect?: { size: number }): Promise<Readable> {
      if (range && !(Number.isSafeInteger(range.start) && range.start >= 0 && range.end >= range.start)) {
        throw new RangeError(`invalid range ${range.start}-${range.end}`);
      }
      let res;
      try {
        res = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: objectKey(key),
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
      } catch (err) {
        if (isNotFound(err)) throw new BlobNotFoundError(key);
        // A range within the size the caller recorded that S3 cannot satisfy: the object is shorter.
        if (errorStatus(err) === 416)
          throw expect && range && range.end < expect.size ? new BlobSizeError(key, null) : new RangeError(`unsatisfiable range for ${key}`);
        throw translated(err);
      }
      const body = res.Body;
      if (!(body instanceof Readable)) throw new Error('S3 returned a non-stream body');
      // The object's whole size: the total of a ranged answer's Content-Range, else its length.
      const total = range ? Number(/\/(\d+)$/.exec(res.ContentRange ?? '')?.[1] ?? NaN) : (res.ContentLength ?? NaN);
      if (expect && total !== expect.size) {
        body.destroy();
        throw new BlobSizeError(key, Number.isNaN(total) ? null : total);
      }
      if (range && res.ContentRange !== undefined) {
        const got = /^bytes (\d+)-(\d+)\/\d+$/.exec(res.ContentRange);
        if (Number(got?.[1]) !== range.start || Number(got?.[2]) !== range.end) {
          body.destroy();
          // S3 silently truncates a range that runs past the end; the disk
          // store refuses it, and callers rely on getting exactly what they asked.
          if (Number(got?.[1]) === range.start) throw new RangeError(`unsatisfiable range for ${key}`);
          throw new Error(`S3 answered range ${range.start}-${range.end} with ${res.ContentRange}`);
        }
      } else if (range) {
        body.destroy();
        throw new Error('S3 ignored the requested range');
      }
      return body;
    },

    // Server-side: the bytes never pass through this process. Like reads and writes of bytes, it
    // has no overall time limit (a large object takes as long as it takes).
    async copy(from: string, to: string): Promise<boolean> {
      const source = `${bucket}/${objectKey(from).split('/').map(encodeURIComponent).join('/')}`;
      try {
        await client.send(new CopyObjectCommand({ Bucket: bucket, Key: objectKey(to), CopySource: source }));
        return true;
      } catch (err) {
        if (!isNotFound(err)) throw translated(err);
        await checkBucket();
        return false;
      }
    },

    async delete(key: string): Promise<void> {
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) }), briefly());
      } catch (err) {
        if (!isNotFound(err)) throw translated(err);
      }
    },

    async presignPut(key: string, opts: PresignPutOptions): Promise<PresignedPut> {
      checkExpiry(opts.expiresInSeconds);
      if (!Number.isSafeInteger(opts.contentLength) || opts.contentLength < 0) throw new RangeError('bad contentLength');
      const command = new PutObjectCommand({
        Bucket: bucket,
        Key: objectKey(key),
        ContentType: opts.contentType,
        ContentLength: opts.contentLength,
      });
      // The presigner leaves content-type unsigned by default; signing both
      // headers makes S3 itself refuse any other type or size.
      const url = await getSignedUrl(signer, command, {
        expiresIn: opts.expiresInSeconds,
        ...signingDate(opts.signedAt),
        signableHeaders: new Set(['content-type', 'content-length']),
      }).catch((err: unknown) => {
        throw translated(err);
      });
      return { url, headers: { 'content-type': opts.contentType } };
    },

    async presignGet(key: string, opts: PresignGetOptions): Promise<string> {
      checkExpiry(opts.expiresInSeconds);
      const command = new GetObjectCommand({
        Bucket: bucket,
        Key: objectKey(key),
        ResponseContentDisposition: contentDisposition(opts.filename),
        ResponseContentType: opts.contentType,
      });
      return getSignedUrl(signer, command, { expiresIn: opts.expiresInSeconds, ...signingDate(opts.signedAt) }).catch((err: unknown) => {
        throw translated(err);
      });
    },

    ping: checkBucket,

    removeStaleTemp: (before) => removeStaleFiles(config.spoolDir ?? tmpdir(), /^rolodex-blob-.+\.tmp$/, before, false),

    async close(): Promise<void> {
      client.destroy();
      if (signer !== client) signer.destroy();
    },
  };
  return store;
}
