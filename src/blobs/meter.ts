import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { BlobTooLargeError, type BlobStat } from './blob-store.ts';

/**
 * Pass-through that counts and MD5-hashes bytes, failing the pipeline the
 * moment the running total passes `maxBytes` (rather than after the whole
 * oversize body has been written somewhere). `trailer`, if given, is appended
 * after the body once its size and hash are known.
 */
export class MeterStream extends Transform {
  readonly maxBytes: number;
  private size = 0;
  private readonly hash: Hash = createHash('md5');
  private readonly trailer: ((stat: BlobStat) => Buffer) | undefined;
  private stat: BlobStat | undefined;

  constructor(maxBytes: number, trailer?: (stat: BlobStat) => Buffer) {
    super();
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`invalid maxBytes ${maxBytes}`);
    this.maxBytes = maxBytes;
    this.trailer = trailer;
  }

  override _transform(chunk: Buffer | string, encoding: BufferEncoding, callback: TransformCallback): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    this.size += buf.length;
    if (this.size > this.maxBytes) {
      callback(new BlobTooLargeError(this.maxBytes));
      return;
    }
    this.hash.update(buf);
    callback(null, buf);
  }

  override _flush(callback: TransformCallback): void {
    callback(null, this.trailer ? this.trailer(this.result()) : undefined);
  }

  /** Only valid once the whole body has passed through. */
  result(): BlobStat {
    this.stat ??= { size: this.size, md5: this.hash.digest('hex') };
    return this.stat;
  }
}
