// Import kind `file` (decisions §10): `source`, `filename`, `mimeType` and `path`. The bytes are
// copied into blob storage before the transaction (prepare), their size and MD5 computed on the
// way, never trusted; a failed import deletes the copies; re-importing replaces a file's bytes and
// leaves the old ones to the sweeper.
import { open } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store.ts';
import { BlobTooLargeError } from '../blobs/blob-store.ts';
import { type ImportItem, type ImportKind, ImportError, ImportFieldError, chunks, lookupExternalIds, onlyFields, str } from '../import/kind.ts';
import { isoNow, newId } from '../lib/ids.ts';
import * as repo from './repository.ts';
import { hasControlCharacters, MAX_FILE_BYTES, mimeEssence } from './rules.ts';
import type { FileSource } from './tables.ts';

interface FileInput {
  source: FileSource;
  filename: string;
  mimeType: string;
  path: string;
  /** Filled by prepare. */
  blob?: { key: string; size: number; md5: string };
}

const SOURCES: FileSource[] = ['api', 'app', 'chat_attachment'];

function blobsOf(extras: Record<string, unknown>): BlobStore {
  const blobs = extras.blobs as BlobStore | undefined;
  if (!blobs) throw new Error('the file import needs extras.blobs (a BlobStore)');
  return blobs;
}

async function copyIn(blobs: BlobStore, workspaceId: string, item: ImportItem<FileInput>): Promise<void> {
  const key = `${workspaceId}/import-${randomBytes(8).toString('hex')}`;
  try {
    // Opened first: a stream that fails to open would raise its error before anyone listens.
    const handle = await open(item.value.path, 'r');
    try {
      const stat = await blobs.put(key, handle.createReadStream(), { maxBytes: MAX_FILE_BYTES, contentType: item.value.mimeType });
      item.value.blob = { key, ...stat };
    } finally {
      await handle.close().catch(() => {});
    }
  } catch (err) {
    if (err instanceof BlobTooLargeError) throw new ImportError(item.line, 'path', `the file is larger than ${MAX_FILE_BYTES} bytes (512 MB)`);
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw new ImportError(item.line, 'path', `cannot read "${item.value.path}": ${code}`);
    throw err;
  }
}

export const fileKind: ImportKind<FileInput> = {
  object: 'file',
  check(raw) {
    onlyFields(raw, ['source', 'filename', 'mimeType', 'path']);
    const source = str(raw, 'source', { required: true }) as FileSource;
    if (!SOURCES.includes(source)) throw new ImportFieldError('source', `must be one of ${SOURCES.join(', ')}`);
    const filename = str(raw, 'filename', { required: true, max: 255 }) as string;
    if (filename === '' || hasControlCharacters(filename)) throw new ImportFieldError('filename', 'must be 1 to 255 characters without control characters');
    const mimeType = str(raw, 'mimeType', { required: true, max: 255 }) as string;
    if (!mimeEssence(mimeType)) throw new ImportFieldError('mimeType', 'must be a MIME type such as text/plain');
    const path = str(raw, 'path', { required: true }) as string;
    if (path === '') throw new ImportFieldError('path', 'must name a file');
    return { source, filename, mimeType, path };
  },
  async prepare(ctx, items) {
    const blobs = blobsOf(ctx.extras);
    const undo = async () => {
      for (const item of items) if (item.value.blob) await blobs.delete(item.value.blob.key).catch(() => {});
    };
    try {
      for (const item of items) await copyIn(blobs, ctx.workspaceId, item);
    } catch (err) {
      await undo();
      throw err;
    }
    return { undo };
  },
  lookup: (tx, workspaceId, externalIds) => lookupExternalIds(tx, 'files', workspaceId, externalIds),
  async upsert(ctx, items) {
    const at = isoNow(ctx.now);
    await repo.lockListing(ctx.tx, ctx.workspaceId);
    const listed: repo.FileRow[] = [];
    const unlisted: repo.FileRow[] = [];
    const existing = new Map<string, repo.FileRow>();
    for (const part of chunks(items.map((i) => i.externalId))) {
      const rows = await ctx.tx.selectFrom('files').selectAll().where('workspace_id', '=', ctx.workspaceId).where('external_id', 'in', part).execute();
      for (const r of rows) existing.set(r.external_id as string, r);
    }
    for (const item of items) {
      const { source, filename, mimeType, blob } = item.value;
      if (!blob) throw new ImportError(item.line, 'path', 'the bytes were not copied');
      const fields = { source, filename, mime_type: mimeType, size_bytes: blob.size, md5: blob.md5, blob_key: blob.key, status: 'COMPLETED' as const, expires_at: null };
      const old = existing.get(item.externalId);
      let id: string;
      if (old) {
        id = old.id;
        await ctx.tx.updateTable('files').set({ ...fields, completed_at: old.completed_at ?? at }).where('id', '=', id).execute();
        if (old.blob_key) await repo.addGarbage(ctx.tx, old.blob_key, at);
        const delta = (repo.isListable(source) ? 1 : 0) - (repo.isListable(old.source) ? 1 : 0);
        if (delta !== 0) await repo.bumpCount(ctx.tx, ctx.workspaceId, delta);
        if (delta !== 0) (delta > 0 ? listed : unlisted).push(old);
      } else {
        id = newId('fil', ctx.now);
        const row = { id, workspace_id: ctx.workspaceId, external_id: item.externalId, ...fields, created_at: at, completed_at: at, upload_deadline: at };
        await repo.insertFile(ctx.tx, row, { ranked: false });
        if (repo.isListable(source)) listed.push(row);
      }
      ctx.register('file', item.externalId, id);
    }
    await repo.rankFiles(ctx.tx, ctx.workspaceId, listed, unlisted);
  },
};
