// Issuing, listing and revoking API keys: operator work (the CLI, the demo, tests). Checking a key
// on a request is the authenticator's (authenticator.ts).
import type { Ctx, SystemCtx } from '../lib/context.ts';
import { MAX_DURATION_DAYS, MAX_DURATION_MS } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { requireUser } from '../users/service.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import { keyStatus } from './authenticator.ts';
import * as repo from './repository.ts';
import { isScope, PUBLIC_SCOPES, type Scope } from './scopes.ts';
import { generateSecret, hashSecret, secretIn } from './secrets.ts';

/** Parses `30d`, `12h`, `45m`, `90s` into milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) throw new InputError(`invalid duration "${text}": use a number followed by s, m, h or d (e.g. 30d)`, 'expires-in');
  const n = Number(m[1]);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
  if (n <= 0) throw new InputError(`invalid duration "${text}": must be positive`, 'expires-in');
  if (n * unit > MAX_DURATION_MS) throw new InputError(`invalid duration "${text}": at most ${MAX_DURATION_DAYS} days (100 years)`, 'expires-in');
  return n * unit;
}

export function parseScopes(list: string[]): Scope[] {
  const out = new Set<Scope>();
  for (const raw of list) {
    const s = raw.trim();
    if (s === '') continue;
    if (!isScope(s)) throw new InputError(`unknown scope "${s}"; known scopes: ${PUBLIC_SCOPES.join(', ')}`, 'scopes');
    out.add(s);
  }
  if (out.size === 0) throw new InputError('at least one scope is needed (omit --scopes for full access)', 'scopes');
  return [...out];
}

/** A key as listings show it at `now`: never its secret nor its hash. */
export function toResource(row: repo.KeyRow, now: number) {
  return {
    id: row.id,
    prefix: `rdx_${row.prefix}`,
    subjectType: row.user_id ? 'user' : 'workspace',
    userId: row.user_id,
    scopes: row.scopes === null ? [] : (JSON.parse(row.scopes) as string[]),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    status: keyStatus(row, now),
  };
}

export interface KeyInput {
  /** The user the key acts as; null for a workspace key. */
  userId: string | null;
  /** null for full access. */
  scopes: Scope[] | null;
  expiresInMs: number | null;
}

/** A key of ctx's workspace. The secret is returned here once and stored only as its hash. */
export async function createKey(ctx: Ctx, input: KeyInput) {
  await requireWorkspace(ctx);
  if (input.userId) await requireUser(ctx, { id: input.userId });
  const { secret, prefix, hash } = generateSecret();
  const id = newId('key', ctx.now);
  const expiresAt = input.expiresInMs === null ? null : isoNow(ctx.now + input.expiresInMs);
  await repo.insertKey(ctx.db, {
    id,
    workspace_id: ctx.actor.workspaceId,
    user_id: input.userId,
    prefix,
    secret_hash: hash,
    scopes: input.scopes === null ? null : JSON.stringify(input.scopes),
    created_at: isoNow(ctx.now),
    expires_at: expiresAt,
    revoked_at: null,
    last_used_at: null,
  });
  return { id, secret, prefix, subjectType: input.userId ? ('user' as const) : ('workspace' as const), scopes: input.scopes ?? [], expiresAt };
}

export async function listKeys(ctx: Ctx) {
  await requireWorkspace(ctx);
  return (await repo.listKeys(ctx.db, ctx.actor.workspaceId)).map((row) => toResource(row, ctx.now));
}

/**
 * Revokes a key by id (of any workspace: the operator names the key itself). A key revoked before
 * stays revoked since then, `alreadyRevoked` telling so.
 */
export async function revokeKey(ctx: SystemCtx, input: { id: string }) {
  const { row, changed } = await repo.revokeKey(ctx.db, input.id, isoNow(ctx.now));
  if (!row) throw new InputError(await notAnId(ctx, input.id), 'id');
  return { ...toResource(row, ctx.now), alreadyRevoked: !changed };
}

// A listed prefix (`rdx_ab12cd34`, copied with or without its `…`) given where the id goes: the
// key it names is pointed to by its id, which `key list` shows first.
const LISTED_PREFIX = /^rdx_([a-z0-9]{8})_?(…|\.\.\.)?$/;

async function notAnId(ctx: SystemCtx, text: string): Promise<string> {
  const prefix = LISTED_PREFIX.exec(text)?.[1];
  if (prefix === undefined) return `no key with id "${text}"`;
  const keys = await repo.keysWithPrefix(ctx.db, prefix);
  const head = `"${text}" is a key's prefix, not its id`;
  if (keys.length === 0) return `${head}, and no key has it: \`rolodex key list --workspace W\` shows the ids first`;
  const ids = keys.map((k) => `${k.id} (workspace ${k.workspace_id})`).join(', ');
  return `${head}: ${keys.length === 1 ? 'it is key' : 'it is each of the keys'} ${ids}; revoke a key by its id: \`rolodex key revoke ${keys[0]!.id}\``;
}

/** The key whose whole secret `text` holds (alone or after `Bearer `), of any workspace; null when none. */
export async function keyOfSecret(ctx: SystemCtx, text: string) {
  const secret = secretIn(text);
  const row = secret === undefined ? undefined : await repo.findKeyByHash(ctx.db, hashSecret(secret));
  return row ? { ...toResource(row, ctx.now), workspaceId: row.workspace_id } : null;
}
