// A COMPLETED file whose bytes the blob store no longer has: removed by hand from DATA_DIR or from
// the bucket, or lost with a disk. No upload or import can have left it so, and retrying cannot
// mend it, so its downloads from the server's address answer 409 `invalid_file_state` (with
// `x-should-retry: false`), GET and HEAD alike and whatever their Range (never 416), and each such
// answer is logged at error: the store lost data, which only an operator can put back
// (docs/files.md §Bytes missing from the store).
import type { BlobStore } from '../blobs/blob-store.ts';
import { AppError } from '../lib/errors.ts';
import type { FileRow } from './repository.ts';

export class MissingBytesError extends AppError {
  readonly fileId: string;
  readonly workspaceId: string;
  readonly blobKey: string;
  constructor(row: FileRow & { blob_key: string }) {
    super('invalid_file_state', "This file's bytes are missing from storage, so it cannot be downloaded; this has been logged for the operator.");
    this.fileId = row.id;
    this.workspaceId = row.workspace_id;
    this.blobKey = row.blob_key;
  }
}

/** Throws MissingBytesError unless the store has the bytes of `row` (a COMPLETED file). */
export async function checkBytesThere(blobs: BlobStore, row: FileRow & { blob_key: string }): Promise<void> {
  if (!(await blobs.has(row.blob_key))) throw new MissingBytesError(row);
}

/** Logs `err` at error when it is a file's missing bytes; either way, rethrows it. */
export function logMissing(log: { error(fields: object, msg: string): void }, err: unknown): never {
  if (err instanceof MissingBytesError) {
    const { fileId, workspaceId, blobKey } = err;
    log.error(
      { fileId, workspaceId, blobKey },
      "a COMPLETED file's bytes are missing from the blob store; its downloads are answered 409 until they are put back",
    );
  }
  throw err;
}
