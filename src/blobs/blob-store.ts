/**
 * Blob storage: one small interface, two backends (local disk, S3-compatible).
 *
 * Contract every backend honours:
 * - Keys are server-made opaque strings such as `ws_x/fil_y`; see `assertValidKey`.
 * - `put` streams (never buffers a whole body), counts and MD5-hashes the bytes,
 *   and fails with `BlobTooLargeError` as soon as more than `maxBytes` arrive.
 *   A failed put leaves nothing new behind and the previous object under the
 *   key (if any) intact; a successful put atomically replaces it. When `put`
 *   resolves, the bytes are durable (fsync'd, or acknowledged by S3).
 * - `stat` returns null for an absent key; `read` and ranged reads throw
 *   `BlobNotFoundError` for one, and `RangeError` for an unsatisfiable range
 *   (callers validate ranges against `stat` first, so that is a bug).
 * - `size` is the size `read` would find under the key (null for an absent key),
 *   reading no bytes of it and computing nothing (S3's `stat` may hash a whole
 *   object to find its MD5).
 * - A disk blob cut short or with a damaged trailer throws `BlobCorruptError`
 *   from `stat`, `size` and `read`: there are bytes, but not ones the store wrote.
 * - `read` given the size the caller recorded (`expect`) throws `BlobSizeError`,
 *   before any byte, when the object holds another number of bytes: it learns
 *   the size from what it reads anyway (the trailer, the GET's answer), so a
 *   download needs no `size` call first.
 * - A stream returned by `read` holds a file descriptor or socket until it
 *   ends: consume it or destroy it.
 * - `delete` of an absent key succeeds.
 * - `presignPut`/`presignGet` exist only where clients can talk to the store
 *   directly (S3); the server falls back to proxying through `put`/`read`.
 * - `copy` exists where `presignPut` does: a presigned PUT can overwrite its key
 *   until the address expires, so bytes that must not change any more are
 *   copied to a key no client can write. It resolves false for an absent source.
 */
import type { Readable } from 'node:stream';

export interface BlobStat {
  size: number;
  /** Lowercase hex MD5 of the whole object. */
  md5: string;
}

/** Inclusive byte offsets, like an HTTP `Range: bytes=start-end`. */
export interface BlobRange {
  start: number;
  end: number;
}

export interface PutOptions {
  maxBytes: number;
  contentType?: string;
}

/** The longest lifetime of a presigned address: SigV4's hard limit, 7 days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/**
 * When a presigned address is dated: ms since the epoch (default: the present). A signature's date
 * is a whole second, so the address is valid from that second until `expiresInSeconds` after it:
 * dated at the request's clock, it lives at least until the expiresAt the API states
 * (docs/files.md §Addresses).
 */
interface Dated {
  signedAt?: number;
}

export interface PresignPutOptions extends Dated {
  contentType: string;
  /** Signed, so the store itself refuses a body of any other length. */
  contentLength: number;
  expiresInSeconds: number;
}

export interface PresignGetOptions extends Dated {
  expiresInSeconds: number;
  filename: string;
  contentType: string;
}

export interface PresignedPut {
  url: string;
  /** Headers the client must send verbatim with its PUT. */
  headers: Record<string, string>;
}

export interface BlobStore {
  readonly kind: 'disk' | 's3';
  put(key: string, body: Readable | NodeJS.ReadableStream, opts: PutOptions): Promise<BlobStat>;
  stat(key: string): Promise<BlobStat | null>;
  size(key: string): Promise<number | null>;
  read(key: string, range?: BlobRange, expect?: { size: number }): Promise<Readable>;
  delete(key: string): Promise<void>;
  presignPut?(key: string, opts: PresignPutOptions): Promise<PresignedPut>;
  presignGet?(key: string, opts: PresignGetOptions): Promise<string>;
  copy?(from: string, to: string): Promise<boolean>;
  /** Readiness probe: throws when the store cannot be used. */
  ping(): Promise<void>;
  /** Deletes temp files of puts that died (a killed process) and were last written before `before`. */
  removeStaleTemp(before: number): Promise<number>;
  close(): Promise<void>;
}

export class BlobTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`blob exceeds the limit of ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/** The object under `key` is not whole: a disk blob file cut short, or its trailer damaged. */
export class BlobCorruptError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`corrupt blob file for key ${key}`);
    this.name = 'BlobCorruptError';
    this.key = key;
  }
}

/** The object under `key` holds `found` bytes (null: not told), not the number its reader recorded. */
export class BlobSizeError extends Error {
  readonly key: string;
  readonly found: number | null;
  constructor(key: string, found: number | null) {
    super(`blob ${key} holds ${found ?? 'another number of'} bytes, not the number recorded`);
    this.name = 'BlobSizeError';
    this.key = key;
    this.found = found;
  }
}

export class BlobNotFoundError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`blob not found: ${key}`);
    this.name = 'BlobNotFoundError';
    this.key = key;
  }
}

/**
 * The store did not answer, or not in time, or answered that it cannot serve now (a 5xx): the
 * same call can succeed shortly. The API answers it 503 `service_unavailable` (docs/errors.md).
 */
export class BlobStoreUnavailableError extends Error {
  /** The cause alone, without the sentence that frames it. */
  readonly reason: string;
  constructor(reason: string, options?: ErrorOptions) {
    super(`the blob store is not reachable: ${reason}`, options);
    this.name = 'BlobStoreUnavailableError';
    this.reason = reason;
  }
}

/**
 * The store refuses this deployment's settings: the bucket does not exist, the credentials or
 * the role's permissions are refused, the bucket is in another region or behind another
 * endpoint. No client can change that, so the API answers it as an unreachable store, 503
 * `service_unavailable`, and logs this message, which names the setting to fix
 * (docs/reliability.md §Blob store).
 */
export class BlobStoreMisconfiguredError extends BlobStoreUnavailableError {
  constructor(reason: string, options?: ErrorOptions) {
    super(reason, options);
    this.message = `the blob store refuses this deployment's settings: ${reason}`;
    this.name = 'BlobStoreMisconfiguredError';
  }
}

/**
 * The local disk refuses the blob directory: this process may not write or read it, its file
 * system is read-only or full, the disk failed, or too many files are open. Neither the key nor
 * the client is at fault and the same call succeeds once an operator mends it, so the API answers
 * it as an unreachable store, 503 `service_unavailable`, and logs this message, which names the
 * directory and the cause (docs/reliability.md §Blob store).
 */
export class BlobDiskFaultError extends BlobStoreUnavailableError {
  constructor(reason: string, options?: ErrorOptions) {
    super(reason, options);
    this.message = `the blob directory cannot be used: ${reason}`;
    this.name = 'BlobDiskFaultError';
  }
}

export class InvalidBlobKeyError extends Error {
  constructor(reason: string) {
    super(`invalid blob key: ${reason}`);
    this.name = 'InvalidBlobKeyError';
  }
}

// Deliberately narrow: keys are made by the server, so anything outside this
// shape is a bug or an attack. No leading dot rules out `.`, `..` and hidden
// names (the disk store's temp files start with a dot and so can never clash).
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
const MAX_KEY_LENGTH = 512;

/** Throws InvalidBlobKeyError unless `key` is `segment(/segment)*`. */
export function assertValidKey(key: string): string[] {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidBlobKeyError('empty');
  if (key.length > MAX_KEY_LENGTH) throw new InvalidBlobKeyError('too long');
  const segments = key.split('/');
  for (const segment of segments) {
    if (!SEGMENT.test(segment)) throw new InvalidBlobKeyError(JSON.stringify(key));
  }
  return segments;
}

export function assertValidRange(range: BlobRange, size: number): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end >= size) {
    throw new RangeError(`unsatisfiable range ${start}-${end} for ${size} bytes`);
  }
}
