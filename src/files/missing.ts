// A COMPLETED file whose bytes the blob store no longer has: removed by hand from DATA_DIR or from
// the bucket, lost with a disk, or under its key other bytes than the ones recorded (a blob of
// another size put back, a disk blob cut short). No upload or import can have left it so, and
// retrying cannot mend it, so its downloads from the server's address answer 409
// `invalid_file_state` (with `x-should-retry: false`), GET and HEAD alike and whatever their Range
// (never 416, never a 200 that stops short), and each such answer is logged at error: the store
// lost data, which only an operator can put back (docs/files.md §Bytes missing from the store). An
// e-mail attaching it fails for good when the dispatcher comes to send it (docs/emails.md §Delivery).
import { BlobCorruptError, BlobNotFoundError, BlobSizeError, type BlobStore } from '../blobs/blob-store.ts';
import { AppError } from '../lib/errors.ts';
import type { FileRow } from './repository.ts';

/** What these checks read of a COMPLETED file's row: its ids, its key and its recorded size. */
export type StoredFile = Pick<FileRow, 'id' | 'workspace_id' | 'size_bytes'> & { blob_key: string };

export class MissingBytesError extends AppError {
  readonly fileId: string;
  readonly workspaceId: string;
  readonly blobKey: string;
  /** What the store has under the key: nothing, a blob of another size, or a damaged one. */
  readonly found: string;
  constructor(row: StoredFile, found: string) {
    super('invalid_file_state', "This file's bytes are missing from storage, so it cannot be downloaded; this has been logged for the operator.");
    this.fileId = row.id;
    this.workspaceId = row.workspace_id;
    this.blobKey = row.blob_key;
    this.found = found;
  }
}

/**
 * Throws MissingBytesError unless the store has, under the key of `row` (a COMPLETED file), a
 * whole blob of the size recorded for it; reads none of its bytes.
 */
export async function checkBytesThere(blobs: BlobStore, row: StoredFile): Promise<void> {
  let size;
  try {
    size = await blobs.size(row.blob_key);
  } catch (err) {
    throw asMissing(err, row);
  }
  if (size === null) throw new MissingBytesError(row, 'nothing');
  if (size !== Number(row.size_bytes)) throw new MissingBytesError(row, `${size} bytes where ${row.size_bytes} are recorded`);
}

/** `err` of a blob store's read of `row`'s bytes, as MissingBytesError when it says they are gone. */
export function asMissing(err: unknown, row: StoredFile): unknown {
  if (err instanceof BlobNotFoundError) return new MissingBytesError(row, 'nothing');
  if (err instanceof BlobCorruptError) return new MissingBytesError(row, 'a damaged blob');
  if (err instanceof BlobSizeError) return new MissingBytesError(row, `${err.found ?? 'another number of'} bytes where ${row.size_bytes} are recorded`);
  return err;
}

type ErrorLog = { error(fields: object, msg: string): void };

/**
 * The operator's line for `err` at error: one message opening for every consequence (a download
 * refused, an e-mail failed), so that one alert finds them all; `fields` adds what it was for.
 */
export function logMissingBytes(log: ErrorLog, err: MissingBytesError, consequence: string, fields: object = {}): void {
  const { fileId, workspaceId, blobKey, found } = err;
  log.error({ ...fields, fileId, workspaceId, blobKey, found }, `a COMPLETED file's bytes are missing from the blob store; ${consequence}`);
}

/** Logs `err` at error when it is a file's missing bytes; either way, rethrows it. */
export function logMissing(log: ErrorLog, err: unknown): never {
  if (err instanceof MissingBytesError) logMissingBytes(log, err, 'its downloads are answered 409 until they are put back');
  throw err;
}
