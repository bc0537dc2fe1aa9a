// The file rules (docs/design.md §Files): upload sessions, completion checked against the stored
// bytes, cancellation, reads, and download addresses. Blob-store calls that wait on the network
// (stat, delete) happen outside transactions; the transactions then compare-and-set on what was
// checked.
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/scopes.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { Config } from '../config.ts';
import type { Db, Executor } from '../db/types.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { envelope, type Page } from '../lib/paging.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { activateEntry, addPendingEntry, dropPendingEntry } from '../knowledge/repository.ts';
import * as repo from './repository.ts';
import type { FileRow } from './repository.ts';
import { effectiveStatus, hasControlCharacters, MAX_FILE_BYTES, mimeEssence, PURPOSE_RULES } from './rules.ts';
import type { CreateFileInput } from './schemas.ts';
import { signToken } from './tokens.ts';

export interface FilesEnv {
  config: Config;
  db: Db;
  blobs: BlobStore;
}

export function present(row: FileRow, now: number) {
  const status = effectiveStatus(row, now);
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

/** When an orphaned blob may be deleted: S3 presigned PUTs can still land until the session deadline. */
export function releaseAt(env: FilesEnv, row: FileRow, now: number): string {
  if (env.blobs.kind !== 's3') return isoNow(now);
  return isoNow(Math.max(now, Date.parse(row.upload_deadline) + 60_000));
}

function checkPurpose(principal: Principal, input: CreateFileInput, essence: string): void {
  if (input.purpose === 'knowledge_user' && principal.subjectType !== 'user') {
    throw new AppError('user_required', 'Purpose knowledge_user adds the file to a user\'s Knowledge and needs a user\'s API key, not a workspace key.', { param: 'purpose' });
  }
  if (input.purpose === 'knowledge_workspace' && principal.subjectType === 'user' && principal.role !== 'admin') {
    throw new AppError('admin_required', 'Purpose knowledge_workspace needs a workspace key or the key of an admin user.', { param: 'purpose' });
  }
  const rule = input.purpose ? PURPOSE_RULES[input.purpose] : { mimeTypes: null, maxBytes: MAX_FILE_BYTES };
  if (rule.mimeTypes && !rule.mimeTypes.includes(essence)) {
    throw new AppError('mime_type_not_allowed', `mimeType "${essence}" is not allowed for purpose ${input.purpose}; allowed: ${rule.mimeTypes.join(', ')}.`, { param: 'mimeType' });
  }
  if (input.sizeBytes > rule.maxBytes) {
    const what = input.purpose ? `for purpose ${input.purpose}` : 'for any file';
    throw new AppError('file_too_large', `sizeBytes ${input.sizeBytes} is over the ceiling of ${rule.maxBytes} bytes ${what}.`, { param: 'sizeBytes' });
  }
}

export async function createFile(tx: Executor, env: FilesEnv, principal: Principal, input: CreateFileInput, now: number) {
  if (hasControlCharacters(input.filename)) throw new AppError('invalid_value', '"filename" must not contain control characters.', { param: 'filename' });
  const essence = mimeEssence(input.mimeType);
  if (!essence) throw new AppError('invalid_value', '"mimeType" must be a MIME type such as text/plain.', { param: 'mimeType' });
  checkPurpose(principal, input, essence);

  const id = newId('fil', now);
  const deadline = now + env.config.uploadTtlSeconds * 1000;
  const ws = principal.workspaceId;
  let upload: { url: string; headers: Record<string, string> };
  let blobKey: string | null = null;
  if (env.blobs.presignPut) {
    // Presigning is offline: no network wait inside the transaction.
    blobKey = `${ws}/${id}`;
    upload = await env.blobs.presignPut(blobKey, { contentType: input.mimeType, contentLength: input.sizeBytes, expiresInSeconds: Math.ceil((deadline - now) / 1000) });
  } else {
    upload = { url: `${env.config.publicBaseUrl}/uploads/${signToken(env.config.signingSecret, 'u', id, deadline)}`, headers: { 'content-type': input.mimeType } };
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
    expires_at: isoNow(deadline),
    upload_deadline: isoNow(deadline),
  };
  await repo.insertFile(tx, row);
  if (input.purpose === 'knowledge_user') await addPendingEntry(tx, ws, id, { type: 'user', userId: principal.userId }, now);
  if (input.purpose === 'knowledge_workspace') await addPendingEntry(tx, ws, id, { type: 'workspace', userId: null }, now);
  return { ...present(row, now), uploadUrl: upload.url, uploadHeaders: upload.headers };
}

export async function getFile(db: Executor, workspaceId: string, id: string, now: number) {
  const row = await repo.findFile(db, workspaceId, id);
  if (!row) throw notFound('file', id);
  return present(row, now);
}

export async function listFiles(db: Executor, workspaceId: string, page: Page, now: number) {
  const { rows, total } = await repo.listFiles(db, workspaceId, page.limit, page.offset);
  return envelope(rows.map((r) => present(r, now)), total);
}

export function busy(): AppError {
  return new AppError('invalid_file_state', 'The file is being changed by other requests right now; retry shortly.', { headers: { 'Retry-After': '1' } });
}

function stateError(action: string, status: string): AppError {
  return new AppError('invalid_file_state', `Cannot ${action} a file that is ${status}.`);
}

export interface CompletionCheck {
  row: FileRow;
  /** Set when the file still has to move; absent when it was already COMPLETED. */
  verified?: { blobKey: string; md5: string; size: number };
}

/** The checks of complete that read the stored bytes; run outside any transaction. */
export async function checkCompletion(env: FilesEnv, workspaceId: string, id: string, md5: string | undefined, now: number): Promise<CompletionCheck> {
  const row = await repo.findFile(env.db.kysely, workspaceId, id);
  if (!row) throw notFound('file', id);
  const status = effectiveStatus(row, now);
  if (status === 'COMPLETED') return { row };
  if (status !== 'PENDING') throw stateError('complete', status);
  const stat = row.blob_key ? await env.blobs.stat(row.blob_key) : null;
  if (!stat) throw new AppError('upload_incomplete', 'No bytes have been uploaded for this file yet; PUT them to its uploadUrl first.');
  if (stat.size !== Number(row.size_bytes)) {
    throw new AppError('upload_incomplete', `The uploaded bytes are ${stat.size} bytes long but sizeBytes is ${row.size_bytes}; upload the whole file again.`);
  }
  if (md5 !== undefined && md5 !== stat.md5) {
    throw new AppError('checksum_mismatch', `The MD5 of the uploaded bytes is ${stat.md5}, not ${md5}; upload the file again.`, { param: 'md5' });
  }
  return { row, verified: { blobKey: row.blob_key as string, md5: stat.md5, size: stat.size } };
}

/** Commits a checked completion. Returns null when the file changed since the check (retry it). */
export async function commitCompletion(tx: Executor, check: CompletionCheck, now: number) {
  if (!check.verified) return present(check.row, now);
  const { blobKey, md5, size } = check.verified;
  const set = { status: 'COMPLETED' as const, md5, size_bytes: size, completed_at: isoNow(now), expires_at: null };
  if (!(await repo.transition(tx, check.row.id, { blobKey }, set, isoNow(now)))) return null;
  await activateEntry(tx, check.row.id, now);
  return present({ ...check.row, ...set }, now);
}

/** Cancels in the transaction; returns the resource and the blob to delete once committed. */
export async function cancelFile(tx: Executor, env: FilesEnv, workspaceId: string, id: string, now: number) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await repo.findFile(tx, workspaceId, id);
    if (!row) throw notFound('file', id);
    const status = effectiveStatus(row, now);
    if (status !== 'PENDING') throw stateError('cancel', status);
    const set = { status: 'CANCELLED' as const, expires_at: null };
    if (!(await repo.transition(tx, id, { blobKey: row.blob_key }, set, isoNow(now)))) continue; // a PUT swapped the bytes: read again
    await dropPendingEntry(tx, id);
    if (row.blob_key) await repo.addGarbage(tx, row.blob_key, releaseAt(env, row, now));
    return { file: present({ ...row, ...set }, now), garbage: row.blob_key };
  }
  throw busy();
}

export async function downloadAddress(env: FilesEnv, workspaceId: string, id: string, now: number) {
  const row = await repo.findFile(env.db.kysely, workspaceId, id);
  if (!row) throw notFound('file', id);
  const status = effectiveStatus(row, now);
  if (status !== 'COMPLETED' || !row.blob_key) throw new AppError('invalid_file_state', `A download address exists only for COMPLETED files; this one is ${status}.`);
  const expires = now + env.config.downloadTtlSeconds * 1000;
  const url = env.blobs.presignGet
    ? await env.blobs.presignGet(row.blob_key, { expiresInSeconds: env.config.downloadTtlSeconds, filename: row.filename, contentType: row.mime_type })
    : `${env.config.publicBaseUrl}/downloads/${signToken(env.config.signingSecret, 'd', id, expires)}`;
  return { url, expiresAt: isoNow(expires) };
}

/** Deletes an orphaned blob now, best effort; its garbage row stays for the sweeper when this fails or
 *  when late presigned PUTs may still land (S3). */
export async function collect(env: FilesEnv, blobKey: string, now: number): Promise<void> {
  try {
    await env.blobs.delete(blobKey);
    const row = await env.db.kysely.selectFrom('blob_garbage').select('not_before').where('blob_key', '=', blobKey).executeTakeFirst();
    if (row && Date.parse(row.not_before) <= now) await repo.removeGarbage(env.db.kysely, blobKey, row.not_before);
  } catch {
    // The sweeper tries again.
  }
}
