// The byte side of files, behind the signed addresses: receiving an upload (streamed through a
// size guard and MD5 into a fresh blob, then swapped in by compare-and-set) and serving a download
// (whole or one byte range). No Fastify types here; byte-routes.ts adapts these to HTTP.
import type { Readable } from 'node:stream';
import { BlobStoreUnavailableError, BlobTooLargeError } from '../blobs/blob-store.ts';
import { contentDisposition } from '../blobs/content-disposition.ts';
import { AppError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import { preconditionFails } from './conditions.ts';
import { asMissing, checkBytesThere } from './missing.ts';
import * as repo from './repository.ts';
import { effectiveStatus, headerSafeType, signedHeaderValue } from './rules.ts';
import { ADOPT_MARGIN_MS, busy, collect, discard, type FilesSystemCtx, newBlobKey } from './service.ts';
import { verifyToken } from './tokens.ts';
import { write } from '../db/index.ts';

async function fileFor(ctx: FilesSystemCtx, token: string, kind: 'u' | 'd') {
  const code = kind === 'u' ? 'invalid_upload_token' : 'invalid_download_token';
  const what = kind === 'u' ? 'upload' : 'download';
  const check = verifyToken(ctx.files.signingSecret, token, kind, ctx.now);
  if (!check.ok) {
    const why = check.reason === 'expired' ? 'has expired' : check.reason === 'kind' ? `is not ${kind === 'u' ? 'an' : 'a'} ${what} address` : 'is not valid';
    throw new AppError(code, `This ${what} address ${why}.`);
  }
  const row = await repo.findFileById(ctx.db, check.cap.fileId);
  if (!row) throw new AppError(code, `This ${what} address is not valid.`);
  return row;
}

export interface UploadInput {
  token: string;
  body: Readable;
  /** Content-Length, when the client sent one. */
  declaredLength: number | undefined;
  /** Content-Range, when the client sent one. */
  contentRange?: string | undefined;
  /** Content-Type, when the client sent one. */
  contentType: string | undefined;
  /** Whether Content-Type came on more than one line (Node keeps only the first). */
  severalContentTypes?: boolean;
}

/**
 * The server's upload address takes what S3's presigned PUT takes, which signs Content-Type and
 * Content-Length: the type `uploadHeaders` names (compared as SigV4 compares it) and exactly
 * `sizeBytes` bytes. So a client written against one store works on the other (docs/files.md
 * §Addresses). More bytes than that are refused as ever, 413 `upload_too_large`.
 */
function checkHeaders(row: { mime_type: string }, input: UploadInput, max: number): void {
  const type = input.contentType;
  // uploadHeaders' content-type is the file's mimeType (service.ts, createFile).
  const wanted = `send the one uploadHeaders names, ${JSON.stringify(row.mime_type)}. Nothing was kept.`;
  if (type === undefined) throw new AppError('invalid_value', `The PUT has no Content-Type; ${wanted}`, { param: 'Content-Type' });
  if (input.severalContentTypes) throw new AppError('invalid_value', `The PUT has more than one Content-Type; ${wanted}`, { param: 'Content-Type' });
  if (signedHeaderValue(type) !== signedHeaderValue(row.mime_type))
    throw new AppError('invalid_value', `Content-Type ${JSON.stringify(type)} is not the file's; ${wanted}`, { param: 'Content-Type' });
  if (input.declaredLength !== undefined && input.declaredLength < max) throw tooShort(input.declaredLength, max);
}

function tooShort(got: number, max: number): AppError {
  return new AppError('invalid_value', `The PUT carries ${got} bytes; it must carry all sizeBytes (${max}) at once. Nothing was kept.`, {
    param: 'Content-Length',
  });
}

/** ctx.db must not be a transaction: the bytes are stored before the swap's own transaction. */
export async function receiveUpload(ctx: FilesSystemCtx, input: UploadInput) {
  const { body, declaredLength } = input;
  const row = await fileFor(ctx, input.token, 'u');
  // A PUT sends the whole file: one with Content-Range carries part of it, which stored as the file
  // would replace the bytes uploaded before with a piece (RFC 9110 §14.5; docs/files.md §The flow).
  if (input.contentRange !== undefined)
    throw new AppError('invalid_value', 'A PUT sends the whole file; parts (Content-Range) are not taken. Nothing was kept.', { param: 'Content-Range' });
  const max = Number(row.size_bytes);
  checkHeaders(row, input, max);
  const status = effectiveStatus(row, ctx.now);
  if (status !== 'PENDING') throw new AppError('invalid_file_state', `This file is ${status}; bytes can be sent only while it is PENDING.`);
  const tooLarge = () => new AppError('upload_too_large', `More than sizeBytes (${max}) bytes were sent; nothing was kept.`);
  if (declaredLength !== undefined && declaredLength > max) throw tooLarge();

  const key = newBlobKey(row.workspace_id, row.id);
  await repo.addGarbage(ctx.db, key, isoNow(Date.parse(row.upload_deadline) + ADOPT_MARGIN_MS));
  let stat;
  try {
    stat = await ctx.files.blobs.put(key, body, { maxBytes: max, contentType: row.mime_type });
  } catch (err) {
    await discard(ctx, key);
    if (err instanceof BlobTooLargeError) throw tooLarge();
    // A store that cannot take the bytes (a full disk) fails the request's stream too: that is no
    // interrupted upload, and 409 would blame the client's bytes (docs/reliability.md §Blob store).
    if (err instanceof BlobStoreUnavailableError) throw err;
    if (body.errored || (body as { aborted?: boolean }).aborted)
      throw new AppError('upload_incomplete', 'The upload was interrupted before all bytes arrived; nothing was kept.');
    throw err;
  }
  // A chunked body that ended short: complete could never take it, and S3 would have refused it.
  if (stat.size !== max) {
    await discard(ctx, key);
    throw tooShort(stat.size, max);
  }

  // Adopt the new blob unless the file moved on meanwhile; several PUTs at once: the last wins. The
  // bytes may have taken minutes, so this reads the clock again rather than use the request's.
  for (let attempt = 0; attempt < 5; attempt++) {
    const at = Date.now();
    const current = await repo.findFileById(ctx.db, row.id);
    if (!current || effectiveStatus(current, at) !== 'PENDING') {
      await discard(ctx, key);
      throw new AppError(
        'invalid_file_state',
        `This file became ${current ? effectiveStatus(current, at) : 'unavailable'} during the upload; the bytes were not kept.`,
      );
    }
    const old = current.blob_key;
    const adopted = await write(ctx.db, async (tx) => {
      if (!(await repo.transition(tx, row.id, { blobKey: old }, { blob_key: key }, isoNow(at)))) return false;
      await repo.dropGarbage(tx, key);
      if (old) await repo.addGarbage(tx, old, isoNow(at));
      return true;
    });
    if (adopted) {
      if (old) await collect({ ...ctx, now: Date.now() }, { blobKey: old });
      return { sizeBytes: stat.size, md5: stat.md5 };
    }
  }
  throw busy();
}

export interface Download {
  status: 200 | 206;
  headers: Record<string, string>;
  /** Null for a HEAD request, which opens no blob. */
  body: Readable | null;
}

/** One `bytes=` range against `size`; null means serve the whole file (absent or multi-range). */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  if (!header) return null;
  // The unit is case-insensitive (RFC 9110 §14.1); the ranges are a list, whose elements may have
  // spaces around them and whose empty elements count for nothing (§5.6.1.2).
  const set = /^bytes=(.*)$/i.exec(header.trim());
  const specs = set
    ? (set[1] as string)
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
    : [];
  const m = specs.length === 1 ? /^(\d*)-(\d*)$/.exec(specs[0] as string) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null; // malformed or several ranges: ignored (RFC 9110 §14.2)
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  // A last position before the first makes the range invalid, not unsatisfiable: ignored as a
  // malformed one is (RFC 9110 §14.1.1).
  if (m[2] !== '' && Number(m[2]) < start) return null;
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

export interface DownloadInput {
  token: string;
  /** The Range and If-Range headers, when sent. */
  range: string | undefined;
  ifRange: string | undefined;
  /** If-Match and If-Unmodified-Since, when sent: false ones answer 412. */
  ifMatch?: string | undefined;
  ifUnmodifiedSince?: string | undefined;
  /** A HEAD request: the headers of the same GET, and no bytes read. */
  head?: boolean;
}

export async function openDownload(ctx: FilesSystemCtx, input: DownloadInput): Promise<Download> {
  const { range, ifRange, head } = input;
  const row = await fileFor(ctx, input.token, 'd');
  if (row.status !== 'COMPLETED' || !row.blob_key || !row.md5)
    throw new AppError('invalid_file_state', `This file is ${effectiveStatus(row, ctx.now)}; only COMPLETED files can be downloaded.`);
  const size = Number(row.size_bytes);
  const etag = `"${row.md5}"`;
  const lastModified = Date.parse(row.bytes_changed_at ?? row.completed_at ?? row.created_at);
  const headers: Record<string, string> = {
    'content-type': headerSafeType(row.mime_type),
    'content-disposition': contentDisposition(row.filename),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'private, no-store',
    'accept-ranges': 'bytes',
    etag,
    // When the bytes last changed: a re-import that replaces them moves it (docs/files.md §Addresses).
    'last-modified': new Date(lastModified).toUTCString(),
  };
  const stored = { ...row, blob_key: row.blob_key };
  // A false If-Match or If-Unmodified-Since names bytes the file no longer has: 412, never a range
  // of the new ones; missing bytes still answer 409 first (docs/files.md §Addresses).
  if (preconditionFails(input, etag, lastModified)) {
    await checkBytesThere(ctx.files.blobs, stored);
    throw new AppError(
      'precondition_failed',
      "The file's bytes are not the ones If-Match or If-Unmodified-Since names; they changed since. Download it again without them.",
    );
  }
  // If-Range: a range only applies to the version the client already has.
  const wanted = ifRange === undefined || ifRange === etag ? parseRange(range, size) : null;
  if (wanted === 'unsatisfiable') {
    // A 416 would blame the range for what the store lost: missing bytes answer 409 whatever the
    // Range (docs/files.md §Bytes missing from the store).
    await checkBytesThere(ctx.files.blobs, stored);
    throw new AppError('range_not_satisfiable', `The requested range is outside the file's ${size} bytes.`, {
      headers: { 'content-range': `bytes */${size}` },
    });
  }
  // HEAD answers what GET would: bytes the store lost, or has at another size than recorded, are
  // refused by both before any header goes out, never a 200 whose GET fails or stops short
  // (docs/files.md §Bytes missing from the store). A GET's read checks the size as it opens.
  const open = async (r?: { start: number; end: number }) => {
    if (head) {
      await checkBytesThere(ctx.files.blobs, stored);
      return null;
    }
    try {
      return await ctx.files.blobs.read(stored.blob_key, r, { size });
    } catch (err) {
      throw asMissing(err, stored);
    }
  };
  if (!wanted) return { status: 200, headers: { ...headers, 'content-length': String(size) }, body: await open() };
  return {
    status: 206,
    headers: { ...headers, 'content-length': String(wanted.end - wanted.start + 1), 'content-range': `bytes ${wanted.start}-${wanted.end}/${size}` },
    body: await open(wanted),
  };
}
