// The file rules (docs/design.md §Files): upload sessions, completion checked against the stored
// bytes, cancellation, reads, and download addresses. Blob-store calls that wait on the network
// (stat, delete) happen outside transactions; the transactions then compare-and-set on what was
// checked.
import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { type BlobStat, type BlobStore, MAX_PRESIGN_SECONDS } from '../blobs/blob-store.ts';
import type { Config } from '../config.ts';
import { activateEntry, addPendingEntry, dropPendingEntry } from '../knowledge/repository.ts';
import { appendEvent } from '../changes/service.ts';
import type { Ctx, SystemCtx, WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { envelope, type Page } from '../lib/paging.ts';
import { userEmail } from '../meetings/repository.ts';
import * as repo from './repository.ts';
import type { FileRow } from './repository.ts';
import { ceilingOf, effectiveStatus, hasControlCharacters, headerSafeType, mimeEssence, mimeTypeRefusal, purposeRule } from './rules.ts';
import type { CreateFileBody } from './schemas.ts';
import { signToken } from './tokens.ts';

export type CreateFileInput = Static<typeof CreateFileBody>;

/** What the files module needs beyond the ctx: bound once, where its routes or the sweeper start. */
export interface FilesEnv {
  blobs: BlobStore;
  publicBaseUrl: string;
  signingSecret: Buffer;
  uploadTtlSeconds: number;
  downloadTtlSeconds: number;
}

export function filesEnv(config: Config, blobs: BlobStore): FilesEnv {
  const { publicBaseUrl, uploadTtlSeconds, downloadTtlSeconds } = config;
  return { blobs, publicBaseUrl, signingSecret: config.signingSecret(), uploadTtlSeconds, downloadTtlSeconds };
}

/** The ctx of the files API: a request's ctx with the module's env. */
export type FilesCtx = Ctx & { files: FilesEnv };
/** The files module's ctx in a write: ctx.db is the transaction. */
export type FilesWriteCtx = WriteCtx & { files: FilesEnv };
/** The ctx of file work that acts for no caller: the byte endpoints (the token is the capability), the sweeper. */
export type FilesSystemCtx = SystemCtx & { files: FilesEnv };

/** The file as the API shows it at ctx.now (a PENDING session past its deadline reads as EXPIRED). */
export function toResource(ctx: Pick<Ctx, 'now'>, row: FileRow) {
  const status = effectiveStatus(row, ctx.now);
  return {
    id: row.id,
    completedAt: row.completed_at,
    createdAt: row.created_at,
    expiresAt: status === 'PENDING' ? row.expires_at : null,
    filename: row.filename,
    mimeType: row.mime_type,
    sizeBytes: Number(row.size_bytes),
    status,
  };
}

/** A fresh key for one upload's bytes: every PUT writes a new object, swapped in by compare-and-set. */
export function newBlobKey(workspaceId: string, fileId: string): string {
  return `${workspaceId}/${fileId}-${randomBytes(6).toString('hex')}`;
}

/**
 * A blob written for a session is registered as garbage until its row adopts it, so a crash in
 * between leaks nothing; this margin past the session deadline (after which nothing adopts it)
 * keeps the sweeper off it meanwhile.
 */
export const ADOPT_MARGIN_MS = 10 * 60_000;

/** Drops a blob no row adopted, with its garbage row; left to the sweeper when the store fails. */
export async function discard(ctx: FilesSystemCtx, key: string): Promise<void> {
  try {
    await ctx.files.blobs.delete(key);
    await repo.dropGarbage(ctx.db, key);
  } catch {
    // The garbage row remains: the sweeper deletes the blob later.
  }
}

/** When an orphaned blob may be deleted: S3 presigned PUTs can still land until the session deadline. */
export function releaseAt(env: FilesEnv, row: FileRow, now: number): string {
  if (env.blobs.kind !== 's3') return isoNow(now);
  return isoNow(Math.max(now, Date.parse(row.upload_deadline) + 60_000));
}

function checkPurpose(actor: Ctx['actor'], input: CreateFileInput, essence: string): void {
  if (input.purpose === 'knowledge_user' && actor.subjectType !== 'user') {
    throw new AppError('user_required', "Purpose knowledge_user adds the file to a user's Knowledge and needs a user's API key, not a workspace key.", {
      param: 'purpose',
    });
  }
  if (input.purpose === 'knowledge_workspace' && actor.subjectType === 'user' && actor.role !== 'admin') {
    throw new AppError('admin_required', 'Purpose knowledge_workspace needs a workspace key or the key of an admin user.', { param: 'purpose' });
  }
  const refused = mimeTypeRefusal(input.purpose, essence);
  if (refused) throw new AppError('mime_type_not_allowed', `mimeType ${refused}.`, { param: 'mimeType' });
  if (input.sizeBytes > purposeRule(input.purpose).maxBytes) {
    throw new AppError('file_too_large', `sizeBytes ${input.sizeBytes} is over ${ceilingOf(input.purpose)}.`, { param: 'sizeBytes' });
  }
}

export async function createFile(ctx: FilesWriteCtx, input: CreateFileInput) {
  if (hasControlCharacters(input.filename)) throw new AppError('invalid_value', '"filename" must not contain control characters.', { param: 'filename' });
  const essence = mimeEssence(input.mimeType);
  if (!essence) throw new AppError('invalid_value', '"mimeType" must be a MIME type such as text/plain.', { param: 'mimeType' });
  checkPurpose(ctx.actor, input, essence);

  const { now, files: env } = ctx;
  const id = newId('fil', now);
  const deadline = now + env.uploadTtlSeconds * 1000;
  const ws = ctx.actor.workspaceId;
  let upload: { url: string; headers: Record<string, string> };
  let blobKey: string | null = null;
  if (env.blobs.presignPut) {
    // Presigning is offline: no network wait inside the transaction.
    blobKey = `${ws}/${id}`;
    upload = await env.blobs.presignPut(blobKey, {
      contentType: input.mimeType,
      contentLength: input.sizeBytes,
      ...presignedUntil(now, deadline),
    });
  } else {
    upload = { url: `${env.publicBaseUrl}/uploads/${signToken(env.signingSecret, 'u', id, deadline)}`, headers: { 'content-type': input.mimeType } };
  }
  const row: FileRow = {
    id,
    workspace_id: ws,
    external_id: null,
    source: 'api',
    status: 'PENDING',
    filename: input.filename,
    mime_type: input.mimeType,
    size_bytes: input.sizeBytes,
    md5: null,
    blob_key: blobKey,
    created_at: isoNow(now),
    completed_at: null,
    bytes_changed_at: null,
    expires_at: isoNow(deadline),
    upload_deadline: isoNow(deadline),
    purpose: input.purpose ?? null,
  };
  await repo.insertFile(ctx.db, row);
  if (input.purpose === 'knowledge_user') await addPendingEntry(ctx.db, ws, id, { type: 'user', userId: ctx.actor.userId }, now);
  if (input.purpose === 'knowledge_workspace') await addPendingEntry(ctx.db, ws, id, { type: 'workspace', userId: null }, now);
  return { ...toResource(ctx, row), uploadUrl: upload.url, uploadHeaders: upload.headers };
}

export async function getFile(ctx: Ctx, input: { id: string }) {
  const row = await repo.findFile(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) throw notFound('file', input.id);
  return toResource(ctx, row);
}

export async function listFiles(ctx: Ctx, input: Page) {
  const { rows, total } = await repo.listFiles(ctx.db, ctx.actor.workspaceId, input.limit, input.offset);
  return envelope(
    rows.map((r) => toResource(ctx, r)),
    total,
  );
}

export function busy(): AppError {
  return new AppError('file_busy', 'The file is being changed by other requests right now; retry shortly.', { headers: { 'Retry-After': '1' } });
}

function stateError(action: string, status: string): AppError {
  return new AppError('invalid_file_state', `Cannot ${action} a file that is ${status}.`);
}

export interface CompletionCheck {
  row: FileRow;
  /**
   * Set when the file still has to move; absent when it was already COMPLETED. `blobKey` is the
   * row's key as checked; `copy`, when set, the key of the checked bytes the row adopts.
   */
  verified?: { blobKey: string; copy?: string; md5: string; size: number };
}

/** Throws unless `stat` is the whole upload of `row` (and has the given MD5). */
function checkBytes(row: FileRow, stat: BlobStat | null, md5: string | undefined): asserts stat is BlobStat {
  if (!stat) throw new AppError('upload_incomplete', 'No bytes have been uploaded for this file yet; PUT them to its uploadUrl first.');
  if (stat.size !== Number(row.size_bytes)) {
    throw new AppError('upload_incomplete', `The uploaded bytes are ${stat.size} bytes long but sizeBytes is ${row.size_bytes}; upload the whole file again.`);
  }
  if (md5 !== undefined && md5 !== stat.md5) {
    throw new AppError('checksum_mismatch', `The MD5 of the uploaded bytes is ${stat.md5}, not ${md5}; upload the file again.`, { param: 'md5' });
  }
}

/**
 * A complete of a COMPLETED file answers it unchanged (a safe retry), unless it gives an md5 the
 * file's bytes do not have: a 200 would then say the file holds bytes it does not, such as those
 * of a PUT S3 took after the completion (docs/files.md §The flow).
 */
function completedAgain(row: FileRow, md5: string | undefined): CompletionCheck {
  if (md5 !== undefined && row.md5 !== null && md5 !== row.md5) {
    throw new AppError('checksum_mismatch', `The file is COMPLETED with bytes whose MD5 is ${row.md5}, not ${md5}; a completed file's bytes never change.`, {
      param: 'md5',
    });
  }
  return { row };
}

/** The checks of complete that read the stored bytes; run outside any transaction. */
export async function checkCompletion(ctx: FilesCtx, input: { id: string; md5?: string | undefined }): Promise<CompletionCheck> {
  const row = await repo.findFile(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) throw notFound('file', input.id);
  const status = effectiveStatus(row, ctx.now);
  if (status === 'COMPLETED') return completedAgain(row, input.md5);
  if (status !== 'PENDING') throw stateError('complete', status);
  try {
    return { row, verified: await checkBytesOf(ctx, row, input.md5) };
  } catch (err) {
    // A cancel or another complete may have moved the file while its bytes were read (a cancel
    // deletes them): the answer is then the file's state, not the bytes it no longer has.
    if (!(err instanceof AppError)) throw err;
    const now = await repo.findFile(ctx.db, ctx.actor.workspaceId, input.id);
    const after = now ? effectiveStatus(now, ctx.now) : status;
    if (now && after === 'COMPLETED') return completedAgain(now, input.md5);
    if (after !== 'PENDING') throw stateError('complete', after);
    throw err;
  }
}

/** Reads and checks the PENDING file's stored bytes; what commitCompletion then records. */
async function checkBytesOf(ctx: FilesCtx, row: FileRow, md5: string | undefined): Promise<NonNullable<CompletionCheck['verified']>> {
  const { blobs } = ctx.files;
  const stat = row.blob_key ? await blobs.stat(row.blob_key) : null;
  checkBytes(row, stat, md5);
  const blobKey = row.blob_key as string;
  if (!blobs.copy) return { blobKey, md5: stat.md5, size: stat.size };
  // The presigned PUT can overwrite the session's key until its deadline, so the file completes
  // with a copy no address can write; the copy is checked, since a PUT may land meanwhile.
  const copy = newBlobKey(row.workspace_id, row.id);
  await repo.addGarbage(ctx.db, copy, isoNow(Date.parse(row.upload_deadline) + ADOPT_MARGIN_MS));
  try {
    const copied = (await blobs.copy(blobKey, copy)) ? await blobs.stat(copy) : null;
    checkBytes(row, copied, md5);
    return { blobKey, copy, md5: copied.md5, size: copied.size };
  } catch (err) {
    await discard(ctx, copy);
    throw err;
  }
}

/** Drops the copy of a check whose commit did not adopt it. */
export async function dropCheck(ctx: FilesSystemCtx, check: CompletionCheck): Promise<void> {
  if (check.verified?.copy) await discard(ctx, check.verified.copy);
}

/** Commits a checked completion, in write()'s transaction. Returns null when the file changed since the check (retry it). */
export async function commitCompletion(ctx: FilesWriteCtx, input: CompletionCheck) {
  if (!input.verified) return toResource(ctx, input.row);
  const { blobKey, copy, md5, size } = input.verified;
  const at = isoNow(ctx.now);
  const set = { status: 'COMPLETED' as const, md5, size_bytes: size, completed_at: at, expires_at: null };
  if (!(await repo.transition(ctx.db, input.row.id, { blobKey }, copy ? { ...set, blob_key: copy } : set, at))) return null;
  if (copy) {
    await repo.dropGarbage(ctx.db, copy);
    await repo.addGarbage(ctx.db, blobKey, releaseAt(ctx.files, input.row, ctx.now));
  }
  await activateEntry(ctx.db, input.row.id, ctx.now);
  const file = toResource(ctx, { ...input.row, ...set });
  await appendEvent(ctx, { type: 'file.completed', object: file });
  return file;
}

/** Cancels in write()'s transaction; returns the resource and the blob to delete once committed. */
export async function cancelFile(ctx: FilesWriteCtx, input: { id: string }) {
  const { id } = input;
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await repo.findFile(ctx.db, ctx.actor.workspaceId, id);
    if (!row) throw notFound('file', id);
    const status = effectiveStatus(row, ctx.now);
    if (status !== 'PENDING') throw stateError('cancel', status);
    const set = { status: 'CANCELLED' as const, expires_at: null };
    if (!(await repo.transition(ctx.db, id, { blobKey: row.blob_key }, set, isoNow(ctx.now)))) continue; // a PUT swapped the bytes: read again
    await dropPendingEntry(ctx.db, id);
    if (row.blob_key) await repo.addGarbage(ctx.db, row.blob_key, releaseAt(ctx.files, row, ctx.now));
    return { file: toResource(ctx, { ...row, ...set }), garbage: row.blob_key };
  }
  throw busy();
}

/**
 * Refuses the bytes of a file of the workspace to a caller who may not have them (docs/files.md
 * §Who downloads the bytes): the bytes of a transcript or an attachment are content of the
 * meetings, e-mails and messages that hold it, so at least one of them must be the caller's at FULL; a
 * knowledge_user file's are its Knowledge owner's alone. Every path that hands out the bytes, or
 * links them to a parent the caller would read at FULL, asks here; `param` names the file's id
 * in a write.
 */
export async function checkDownload(ctx: Ctx, fileId: string, param?: string): Promise<void> {
  const { workspaceId, userId } = ctx.actor;
  const email = userId === null ? undefined : await userEmail(ctx.db, workspaceId, userId);
  const parents = await repo.downloadParents(ctx.db, { workspaceId, userId }, email, fileId);
  const opts = param === undefined ? {} : { param };
  if (parents.knowledgeOwner !== null) {
    if (parents.knowledgeOwner === userId) return;
    throw new AppError('full_access_required', `The bytes of file "${fileId}" belong to another user's Knowledge; only that user's key can have them.`, opts);
  }
  if (parents.linked && !parents.full) {
    throw new AppError(
      'full_access_required',
      `The bytes of file "${fileId}" need FULL access to a meeting, e-mail or message that holds the file; this key reads none of those at FULL.`,
      opts,
    );
  }
}

export async function downloadAddress(ctx: FilesCtx, input: { id: string }) {
  const row = await repo.findFile(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) throw notFound('file', input.id);
  await checkDownload(ctx, row.id);
  const status = effectiveStatus(row, ctx.now);
  if (status !== 'COMPLETED' || !row.blob_key)
    throw new AppError('invalid_file_state', `A download address exists only for COMPLETED files; this one is ${status}.`);
  const env = ctx.files;
  const expires = ctx.now + env.downloadTtlSeconds * 1000;
  const url = env.blobs.presignGet
    ? await env.blobs.presignGet(row.blob_key, {
        ...presignedUntil(ctx.now, expires),
        filename: row.filename,
        contentType: headerSafeType(row.mime_type),
      })
    : `${env.publicBaseUrl}/downloads/${signToken(env.signingSecret, 'd', input.id, expires)}`;
  return { url, expiresAt: isoNow(expires) };
}

/**
 * How to presign an address at `now` that is valid at least until `until` (the expiresAt answered
 * with it) and less than a second longer: a signature is dated at the whole second of `now`, and
 * its lifetime is whole seconds from that date (docs/files.md §Addresses), at most SigV4's limit.
 */
function presignedUntil(now: number, until: number): { signedAt: number; expiresInSeconds: number } {
  const seconds = Math.ceil((until - Math.floor(now / 1000) * 1000) / 1000);
  return { signedAt: now, expiresInSeconds: Math.min(seconds, MAX_PRESIGN_SECONDS) };
}

/**
 * Deletes an orphaned blob now, best effort; its garbage row stays for the sweeper when this fails
 * or when late presigned PUTs may still land (S3). ctx.db must not be a transaction: the blob store
 * is called here.
 */
export async function collect(ctx: FilesSystemCtx, input: { blobKey: string }): Promise<void> {
  try {
    await ctx.files.blobs.delete(input.blobKey);
    const notBefore = await repo.garbageNotBefore(ctx.db, input.blobKey);
    if (notBefore !== undefined && Date.parse(notBefore) <= ctx.now) await repo.removeGarbage(ctx.db, input.blobKey, notBefore);
  } catch {
    // The sweeper tries again.
  }
}
