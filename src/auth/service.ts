// Key issuing and checking. Lookups go by SHA-256 hash; a short in-process cache spares the
// database on hot paths and is bounded to CACHE_MS so a revocation takes effect within it.
import type { Db, Executor } from '../db/types.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { findKeyByHash, insertKey, listKeys, revokeKey, touchKey, type KeyRow } from './repository.ts';
import { isScope, PUBLIC_SCOPES, type Principal, type Scope } from './scopes.ts';
import { generateSecret, hashSecret, looksLikeSecret } from './secrets.ts';

const CACHE_MS = 1000;
const CACHE_MAX = 10_000;
const TOUCH_EVERY_MS = 60_000;

export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: 'invalid' | 'revoked' | 'expired' };

export class Authenticator {
  readonly #db: Db;
  // The principal is built once per cache entry and shared by its requests: it is never mutated.
  readonly #cache = new Map<string, { row: KeyRow | undefined; principal: Principal | null; at: number }>();
  readonly #touched = new Map<string, number>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** Synchronous while the key is cached, so that the request pipeline need not wait a tick. */
  authenticate(secret: string, now = Date.now()): AuthResult | Promise<AuthResult> {
    if (!looksLikeSecret(secret)) return { ok: false, reason: 'invalid' };
    const hash = hashSecret(secret);
    const cached = this.#cache.get(hash);
    if (cached && now - cached.at <= CACHE_MS) return this.#check(cached, now);
    return findKeyByHash(this.#db.kysely, hash).then((row) => {
      if (this.#cache.size >= CACHE_MAX) this.#cache.clear();
      const entry = { row, principal: row ? toPrincipal(row) : null, at: now };
      this.#cache.set(hash, entry);
      return this.#check(entry, now);
    });
  }

  #check({ row, principal }: { row: KeyRow | undefined; principal: Principal | null }, now: number): AuthResult {
    if (!row || !principal) return { ok: false, reason: 'invalid' };
    if (row.revoked_at) return { ok: false, reason: 'revoked' };
    if (row.expires_at && Date.parse(row.expires_at) <= now) return { ok: false, reason: 'expired' };
    this.#touch(row.id, now);
    return { ok: true, principal };
  }

  // last_used_at is informative only: written at most once a minute per key, off the request path.
  #touch(id: string, now: number): void {
    const last = this.#touched.get(id) ?? 0;
    if (now - last < TOUCH_EVERY_MS) return;
    this.#touched.set(id, now);
    touchKey(this.#db.kysely, id, isoNow(now)).catch(() => this.#touched.delete(id));
  }
}

function toPrincipal(row: KeyRow): Principal {
  return Object.freeze({
    keyId: row.id,
    workspaceId: row.workspace_id,
    subjectType: row.user_id ? 'user' : 'workspace',
    userId: row.user_id,
    role: row.user_role,
    scopes: row.scopes === null ? null : Object.freeze(JSON.parse(row.scopes) as Scope[]),
    expiresAt: row.expires_at,
  });
}

/** Parses `30d`, `12h`, `45m`, `90s` into milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) throw new InputError(`invalid duration "${text}": use a number followed by s, m, h or d (e.g. 30d)`, 'expires-in');
  const n = Number(m[1]);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
  if (n <= 0) throw new InputError(`invalid duration "${text}": must be positive`, 'expires-in');
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

export interface CreatedKey {
  id: string;
  secret: string;
  prefix: string;
  subjectType: 'user' | 'workspace';
  scopes: Scope[];
  expiresAt: string | null;
}

export async function createKey(
  db: Executor,
  input: { workspaceId: string; userId: string | null; scopes: Scope[] | null; expiresInMs: number | null },
  now = Date.now(),
): Promise<CreatedKey> {
  const { secret, prefix, hash } = generateSecret();
  const id = newId('key', now);
  const expiresAt = input.expiresInMs === null ? null : isoNow(now + input.expiresInMs);
  await insertKey(db, {
    id,
    workspace_id: input.workspaceId,
    user_id: input.userId,
    prefix,
    secret_hash: hash,
    scopes: input.scopes === null ? null : JSON.stringify(input.scopes),
    created_at: isoNow(now),
    expires_at: expiresAt,
    revoked_at: null,
    last_used_at: null,
  });
  return { id, secret, prefix, subjectType: input.userId ? 'user' : 'workspace', scopes: input.scopes ?? [], expiresAt };
}

export function describeKey(row: Awaited<ReturnType<typeof listKeys>>[number]) {
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
  };
}

export { listKeys, revokeKey };
