// Import kind `file` (docs/design.md §Import format): `source`, `filename`, `mimeType`, `path` and
// an optional `purpose`. The bytes are copied into blob storage before the transaction (prepare),
// their size and MD5 computed on the way, never trusted; a failed import deletes the copies;
// re-importing replaces a file's bytes and leaves the old ones to the sweeper (the same bytes
// under the same description write nothing). A purpose is checked with the rule of the API's
// create (docs/files.md §Purposes) and, as there, never changes once a file has one: a meeting's
// transcript stays a meeting_transcript file (docs/meetings.md §Writes). A line updates only a
// COMPLETED file: an upload the API has not completed is its client's, or over.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store.ts';
import { BlobTooLargeError } from '../blobs/blob-store.ts';
import { type ImportItem, type ImportKind, ImportError, onlyFields, str, upsertByExternalId } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { ceilingOf, effectiveStatus, hasControlCharacters, mimeEssence, mimeTypeRefusal, type Purpose, PURPOSES, purposeRule } from './rules.ts';
import type { FileSource } from './tables.ts';

interface FileInput {
  source: FileSource;
  filename: string;
  mimeType: string;
  path: string;
  /** The purpose the line gives; null when it gives none (a re-import then keeps the file's). */
  purpose: ImportedPurpose | null;
  /** Filled by prepare. */
  blob?: { key: string; size: number; md5: string };
}

const SOURCES: FileSource[] = ['api', 'app', 'chat_attachment'];

/**
 * The purposes a line may give: those that only decide what the file may be used for. A knowledge
 * purpose also adds the file to a user's or the workspace's Knowledge, which the import does not
 * make (docs/import.md §`channel`, `message`, `file`); the export writes no other.
 */
export const IMPORTED_PURPOSES = ['meeting_transcript', 'email_attachment'] as const satisfies readonly Purpose[];
export type ImportedPurpose = (typeof IMPORTED_PURPOSES)[number];

/** The line's purpose, checked against its MIME type (`essence`) as the API's create checks it. */
function purposeOf(raw: Record<string, unknown>, essence: string): ImportedPurpose | null {
  const purpose = str(raw, 'purpose');
  if (purpose === null) return null;
  if (!(IMPORTED_PURPOSES as readonly string[]).includes(purpose)) {
    if ((PURPOSES as readonly string[]).includes(purpose))
      throw new InputError('is not imported: a knowledge purpose adds the file to a Knowledge, which the import does not make', 'purpose');
    throw new InputError(`must be one of ${IMPORTED_PURPOSES.join(', ')}`, 'purpose');
  }
  const refused = mimeTypeRefusal(purpose as ImportedPurpose, essence);
  if (refused) throw new InputError(refused, 'mimeType');
  return purpose as ImportedPurpose;
}

async function copyIn(blobs: BlobStore, workspaceId: string, item: ImportItem<FileInput>): Promise<void> {
  const key = `${workspaceId}/import-${randomBytes(8).toString('hex')}`;
  try {
    // Opened first: a stream that fails to open would raise its error before anyone listens.
    // Without blocking: opening a named pipe would otherwise wait for a writer, forever. A file's
    // bytes are a regular file's; a pipe or a device (`/dev/zero`) holds none to copy.
    const handle = await open(item.value.path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const kind = await handle.stat();
      if (!kind.isFile()) {
        const what = kind.isDirectory() ? 'a directory' : 'not a regular file (a pipe or a device)';
        throw new ImportError(item.line, 'path', `"${item.value.path}" is ${what}: name a file holding the bytes`);
      }
      const stat = await blobs.put(key, handle.createReadStream(), { maxBytes: purposeRule(item.value.purpose).maxBytes, contentType: item.value.mimeType });
      item.value.blob = { key, ...stat };
    } finally {
      await handle.close().catch(() => {});
    }
  } catch (err) {
    if (err instanceof ImportError) throw err;
    if (err instanceof BlobTooLargeError) throw new ImportError(item.line, 'path', `the file is over ${ceilingOf(item.value.purpose)}`);
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw new ImportError(item.line, 'path', `cannot read "${item.value.path}": ${code}`);
    throw err;
  }
}

/**
 * The purpose a re-imported file ends with: the line's, which may give one the file lacks but never
 * change one it has (the API gives a purpose once, at create); else the file's, whose rule the
 * line's type and bytes then meet as they meet a purpose the line gives (checked with the line, and
 * by prepare).
 */
function purposeAfter({ line, value }: ImportItem<FileInput>, stored: Purpose | null): Purpose | null {
  if (stored === null) return value.purpose;
  if (value.purpose !== null && value.purpose !== stored)
    throw new ImportError(line, 'purpose', `the file has purpose ${stored}, given when it was created; a file's purpose never changes`);
  const refused = mimeTypeRefusal(stored, mimeEssence(value.mimeType) as string);
  if (refused) throw new ImportError(line, 'mimeType', `${refused} (the purpose the file has)`);
  if ((value.blob?.size ?? 0) > purposeRule(stored).maxBytes) throw new ImportError(line, 'path', `the file is over ${ceilingOf(stored)}`);
  return stored;
}

/**
 * Refuses a line that names a file not COMPLETED: only a file the API created, named by its id,
 * can be one. An upload in progress is its client's, who completes or cancels it; a complete after
 * the import would find other bytes than it sent, or the file completed under it. A cancelled or
 * expired upload is over, as it is for the API (docs/files.md §The flow). Either way the line
 * writes nothing (docs/import.md §`channel`, `message`, `file`).
 */
function refuseUnfinished({ line }: ImportItem<FileInput>, old: repo.FileRow, now: number): void {
  const status = effectiveStatus(old, now);
  if (status === 'COMPLETED') return;
  const why = {
    PENDING: 'is in progress (PENDING): its client completes or cancels it, and the import leaves it to them',
    CANCELLED: 'was cancelled (CANCELLED): it takes no bytes any more',
    EXPIRED: 'expired (EXPIRED): it takes no bytes any more',
  }[status];
  throw new ImportError(
    line,
    'externalId',
    `file "${old.id}": its upload through the API ${why}; give the line an externalId of its own to import these bytes as a new file`,
  );
}

/** Whether a completed file already is what a line makes of it: same description, same bytes. */
function sameFile(old: repo.FileRow, fields: Pick<repo.FileRow, 'source' | 'filename' | 'mime_type' | 'size_bytes' | 'md5' | 'purpose'>): boolean {
  if (old.status !== 'COMPLETED' || old.expires_at !== null || old.blob_key === null) return false;
  const keys = ['source', 'filename', 'mime_type', 'md5', 'purpose'] as const;
  return keys.every((k) => old[k] === fields[k]) && Number(old.size_bytes) === fields.size_bytes;
}

/**
 * The kind, bound to the blob store the bytes are copied into (none: an import holding files is
 * refused). A download address of S3 names the bytes themselves, not the file, so the bytes a
 * re-import replaces stay there for `downloadTtlSeconds`, the life of an address handed out before
 * (docs/files.md §Who downloads the bytes); a local address names the file and serves its bytes.
 */
export function fileKind(blobs: BlobStore | undefined, downloadTtlSeconds = 0): ImportKind<FileInput> {
  const store = (): BlobStore => {
    if (!blobs) throw new Error('the file import needs a blob store (importKinds({ blobs }))');
    return blobs;
  };
  return {
    object: 'file',
    check(raw) {
      onlyFields(raw, ['source', 'filename', 'mimeType', 'path', 'purpose']);
      const source = str(raw, 'source', { required: true }) as FileSource;
      if (!SOURCES.includes(source)) throw new InputError(`must be one of ${SOURCES.join(', ')}`, 'source');
      const filename = str(raw, 'filename', { required: true, max: 255 }) as string;
      if (filename === '' || hasControlCharacters(filename)) throw new InputError('must be 1 to 255 characters without control characters', 'filename');
      const mimeType = str(raw, 'mimeType', { required: true, max: 255 }) as string;
      const essence = mimeEssence(mimeType);
      if (!essence) throw new InputError('must be a MIME type such as text/plain', 'mimeType');
      const purpose = purposeOf(raw, essence);
      const path = str(raw, 'path', { required: true }) as string;
      if (path === '') throw new InputError('must name a file', 'path');
      return { source, filename, mimeType, path, purpose };
    },
    async prepare(ctx, items) {
      const blobs = store();
      const drop = async (keep: Set<string | null>) => {
        for (const { value } of items) if (value.blob && !keep.has(value.blob.key)) await blobs.delete(value.blob.key).catch(() => {});
      };
      try {
        for (const item of items) await copyIn(blobs, ctx.actor.workspaceId, item);
      } catch (err) {
        // No transaction has taken these copies yet (an atomic import's is open: not asked).
        await drop(new Set());
        throw err;
      }
      // Once the import's transactions are over: the copies no row names go. A transaction whose
      // COMMIT failed on the way may still have written its rows, and their bytes stay.
      const undo = async () => {
        const rows = await repo.fileRowsByExternalId(ctx.db, ctx.actor.workspaceId, [...new Set(items.map((item) => item.externalId))]);
        await drop(new Set([...rows.values()].map((row) => row.blob_key)));
      };
      return { undo };
    },
    lookup: (ctx, externalIds) => repo.completedByExternalId(ctx.db, ctx.actor.workspaceId, externalIds),
    found: 'COMPLETED file',
    async upsert(ctx, items) {
      const at = isoNow(ctx.now);
      // Counted from this write, not from the import's start: an address handed out meanwhile names the old bytes.
      const replacedUntil = () => (blobs?.kind === 's3' ? isoNow(Date.now() + downloadTtlSeconds * 1000) : at);
      const ws = ctx.actor.workspaceId;
      // Files that become listable or stop being listable are ranked in one batch at the end.
      await repo.lockListing(ctx.db, ws);
      const listed: repo.FileRow[] = [];
      const unlisted: repo.FileRow[] = [];
      const fieldsOf = ({ line, value: { source, filename, mimeType, blob } }: ImportItem<FileInput>, purpose: Purpose | null) => {
        if (!blob) throw new ImportError(line, 'path', 'the bytes were not copied');
        return {
          source,
          filename,
          mime_type: mimeType,
          size_bytes: blob.size,
          md5: blob.md5,
          blob_key: blob.key,
          status: 'COMPLETED' as const,
          expires_at: null,
          purpose,
        };
      };
      await upsertByExternalId(ctx, items, {
        object: 'file',
        idKind: 'fil',
        find: (externalIds) => repo.fileRowsByExternalId(ctx.db, ws, externalIds),
        async update(item, old) {
          refuseUnfinished(item, old, ctx.now);
          const fields = fieldsOf(item, purposeAfter(item, old.purpose as Purpose | null));
          // A line equal to the file, bytes included, writes nothing: the file keeps its blob, and
          // the copy just made, which no row names, goes to the sweeper (docs/import.md §Rules).
          if (sameFile(old, fields)) return void (await repo.addGarbage(ctx.db, fields.blob_key, at));
          // Other bytes move the downloads' Last-Modified (docs/files.md §Addresses); the same bytes
          // under another description leave it where it was, as they leave the ETag, their MD5.
          const bytesChanged = old.md5 !== fields.md5 || Number(old.size_bytes) !== fields.size_bytes;
          await repo.updateFile(ctx.db, old.id, {
            ...fields,
            completed_at: old.completed_at ?? at,
            bytes_changed_at: bytesChanged ? at : old.bytes_changed_at,
          });
          if (old.blob_key) await repo.addGarbage(ctx.db, old.blob_key, replacedUntil());
          const delta = (repo.isListable(fields.source) ? 1 : 0) - (repo.isListable(old.source) ? 1 : 0);
          if (delta !== 0) await repo.bumpCount(ctx.db, ws, delta);
          if (delta !== 0) (delta > 0 ? listed : unlisted).push(old);
        },
        async insert(item, id) {
          const row = {
            id,
            workspace_id: ws,
            external_id: item.externalId,
            ...fieldsOf(item, item.value.purpose),
            created_at: at,
            completed_at: at,
            bytes_changed_at: null,
            upload_deadline: at,
          };
          await repo.insertFile(ctx.db, row, { ranked: false });
          if (repo.isListable(row.source)) listed.push(row);
        },
      });
      await repo.rankFiles(ctx.db, ws, listed, unlisted);
    },
  };
}
