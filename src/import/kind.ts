// The contract between the import runner and each kind of object it can load (docs/design.md
// §Import format). A kind checks an object's shape without the database, then, inside the one
// import transaction, upserts its rows by externalId (phase 1) and resolves its references (phase
// 2), so objects may reference each other in any order.
import { chunks } from '../db/chunks.ts';
import type { DialectName, Executor } from '../db/types.ts';
import { InputError } from '../lib/errors.ts';

/** Tables whose rows carry a workspace and an externalId. */
export type ExternalTable = 'users' | 'channels' | 'files' | 'records';

/** An error tied to an input line (NDJSON) or array item (JSON). */
export class ImportError extends InputError {
  override name = 'ImportError';
  readonly line: number;
  readonly field: string;
  constructor(line: number, field: string, message: string) {
    super(`line ${line}: ${field}: ${message}`, field);
    this.line = line;
    this.field = field;
  }
}

export interface ImportItem<T> {
  line: number;
  externalId: string;
  value: T;
}

export interface ImportContext {
  tx: Executor;
  dialect: DialectName;
  workspaceId: string;
  now: number;
  /** Server id of an object of this import or already in the workspace; throws ImportError naming
   *  the line and field when there is none. */
  resolve(object: string, externalId: string, at: { line: number; field: string }): Promise<string>;
  /** Records the server id of an imported object (for resolve and the id map). */
  register(object: string, externalId: string, id: string): void;
  /** Extra dependencies some kinds need (the blob store for files). */
  extras: Record<string, unknown>;
}

export interface ImportKind<T = unknown> {
  object: string;
  /** Validates one object (its `object` and `externalId` already checked); throws InputError with the field as param. */
  check(raw: Record<string, unknown>): T;
  /** Work outside the transaction, such as copying file bytes; `undo` runs if the import fails. */
  prepare?(ctx: Omit<ImportContext, 'tx' | 'resolve' | 'register'>, items: ImportItem<T>[]): Promise<{ undo(): Promise<void> }>;
  /** Server ids of existing objects of this kind, by externalId. */
  lookup(tx: Executor, workspaceId: string, externalIds: string[]): Promise<Map<string, string>>;
  upsert(ctx: ImportContext, items: ImportItem<T>[]): Promise<void>;
  link?(ctx: ImportContext, items: ImportItem<T>[]): Promise<void>;
}

// Helpers for check() implementations.
export function str(raw: Record<string, unknown>, field: string, opts: { required?: boolean; max?: number } = {}): string | null {
  const v = raw[field];
  if (v === undefined || v === null) {
    if (opts.required) throw new InputError('is required', field);
    return null;
  }
  if (typeof v !== 'string') throw new InputError('must be a string', field);
  if (opts.max !== undefined && v.length > opts.max) throw new InputError(`must be at most ${opts.max} characters`, field);
  return v;
}

export function onlyFields(raw: Record<string, unknown>, allowed: string[]): void {
  for (const k of Object.keys(raw)) {
    if (!allowed.includes(k) && k !== 'object' && k !== 'externalId') throw new InputError('is not a known field', k);
  }
}

/**
 * Server ids of a workspace's rows by externalId, in chunks. `kind` narrows the records table to
 * one kind of record.
 */
export async function lookupExternalIds(tx: Executor, table: ExternalTable, workspaceId: string, externalIds: string[], kind?: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const part of chunks(externalIds)) {
    let q = (tx as Executor).selectFrom(table as 'users').select(['id', 'external_id']).where('workspace_id', '=', workspaceId).where('external_id', 'in', part);
    if (kind !== undefined) q = q.where('kind' as never, '=', kind as never);
    for (const r of await q.execute()) found.set(r.external_id as string, r.id);
  }
  return found;
}
