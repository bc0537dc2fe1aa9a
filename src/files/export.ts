// `rolodex export --files DIR` (docs/import.md §Export, docs/files.md §Listing and import): every
// COMPLETED file of the workspace as a `file` import line, paged by keyset, its bytes copied out
// of blob storage into DIR under the file's id, `path` the copy's absolute path, with its purpose
// when the import takes it. A file without an externalId is written under its server id, and links
// to files name them the same way (`fileNames`). Files still uploading, cancelled or expired are not written, nor files
// completed after the export began (its ctx.now): the `file` lines and the links name the same
// files, whenever each is read, so that every link of the export finds its file on import.
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BlobCorruptError, BlobNotFoundError, BlobSizeError, type BlobStore } from '../blobs/blob-store.ts';
import type { Ctx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow } from '../lib/ids.ts';
import { keysetPages } from '../lib/paging.ts';
import { IMPORTED_PURPOSES } from './import.ts';
import * as repo from './repository.ts';
import { makeDirectory } from '../lib/directories.ts';

const PAGE = 500;
const IMPORTED: readonly string[] = IMPORTED_PURPOSES;

/** Server id → the externalId an export names a file by, for the files it writes; others are absent. */
export type FileNames = (ids: readonly string[]) => Promise<Map<string, string>>;

export function fileNames(ctx: Ctx): FileNames {
  return (ids) => repo.exportedFileNames(ctx.db, ctx.actor.workspaceId, isoNow(ctx.now), ids);
}

/**
 * Each owner's linked files (`read`: file ids, in order) as `names` names them; a file it does
 * not name is left out, and without `names` (files not written) every link is.
 */
export async function namedLinks(names: FileNames | undefined, read: () => Promise<Map<string, string[]>>): Promise<Map<string, string[]>> {
  if (!names) return new Map();
  const links = await read();
  const named = await names([...links.values()].flat());
  return new Map([...links].map(([owner, ids]) => [owner, ids.flatMap((id) => named.get(id) ?? [])]));
}

/**
 * DIR, made (mode 0700) when missing; `made`, the outermost directory this call made; `discard`
 * removes it, DIR and its contents, and leaves a DIR that existed before as it is.
 */
export async function filesDir(dir: string): Promise<{ path: string; made: string | undefined; discard: () => Promise<void> }> {
  const path = resolve(dir);
  let made: string | undefined;
  try {
    made = await makeDirectory(path, 0o700);
  } catch (err) {
    throw new InputError(`cannot write ${dir}: ${(err as Error).message}`, 'files');
  }
  return { path, made, discard: async () => (made ? rm(made, { recursive: true, force: true }) : undefined) };
}

/**
 * The `file` lines, the bytes of each copied into `dir` (absolute) first. A copy is written under
 * a temporary name and renamed, so DIR never holds part of a file under a file's id; a copy of
 * the same file from an earlier export is replaced. The store is opened by `open` and closed
 * when the lines end.
 */
export async function* fileLines(ctx: Ctx, dir: string, open: () => Promise<BlobStore>): AsyncGenerator<Record<string, unknown>> {
  const blobs = await open();
  try {
    for await (const rows of keysetPages((after) => repo.exportedFilesAfter(ctx.db, ctx.actor.workspaceId, isoNow(ctx.now), after, PAGE))) {
      for (const f of rows) {
        const path = await copyOut(blobs, f, dir);
        const line = { object: 'file', externalId: f.external_id ?? f.id, source: f.source, filename: f.filename, mimeType: f.mime_type, path };
        // Only a purpose the import takes is written; a knowledge one is left out, as the Knowledge is.
        yield IMPORTED.includes(f.purpose ?? '') ? { ...line, purpose: f.purpose } : line;
      }
    }
  } finally {
    await blobs.close();
  }
}

/**
 * Copies a file's bytes to `dir`/its id; returns that path. Bytes of another size than the file's
 * fail the export as missing ones do, refused by the read before any is copied: written out, the
 * import would take them for the file's (docs/files.md §Bytes missing from the store).
 */
async function copyOut(blobs: BlobStore, file: repo.FileRow, dir: string): Promise<string> {
  const path = join(dir, file.id);
  const partial = join(dir, `.${file.id}.partial`);
  const stored = `the bytes of the file ${file.id} in blob storage`;
  try {
    const bytes = await blobs.read(file.blob_key as string, undefined, { size: Number(file.size_bytes) });
    await pipeline(bytes, createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, path);
    return path;
  } catch (err) {
    await rm(partial, { force: true });
    if (err instanceof BlobSizeError) throw new InputError(`${stored} are ${err.found ?? 'another number of'} bytes, not the ${file.size_bytes} recorded`);
    if (err instanceof BlobNotFoundError) throw new InputError(`the bytes of the file ${file.id} are missing from blob storage`);
    if (err instanceof BlobCorruptError) throw new InputError(`${stored} are damaged (cut short, or their trailer)`);
    const code = (err as NodeJS.ErrnoException).code;
    if ((err as NodeJS.ErrnoException).path !== undefined && code) throw new InputError(`cannot write ${path}: ${code}`);
    throw err;
  }
}
