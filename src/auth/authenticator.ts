// Checking API keys, for the request pipeline. Lookups go by SHA-256 hash; a short in-process cache
// spares the database on hot paths and is bounded to CACHE_MS so a revocation takes effect within it.
import type { Db } from '../db/index.ts';
import { isoNow } from '../lib/ids.ts';
import { type AuthKeyRow, findKeyByHash, touchKey } from './repository.ts';
import type { Principal, Scope } from './scopes.ts';
import { hashSecret, looksLikeSecret } from './secrets.ts';

/**
 * Whether a key opens requests at `now`: `revoked` once revoked, `expired` from its expiry on,
 * else `active`. Requests and `rolodex key list` read it alike.
 */
export function keyStatus(row: Pick<AuthKeyRow, 'revoked_at' | 'expires_at'>, now: number): 'active' | 'expired' | 'revoked' {
  if (row.revoked_at) return 'revoked';
  if (row.expires_at && Date.parse(row.expires_at) <= now) return 'expired';
  return 'active';
}

const CACHE_MS = 1000;
const CACHE_MAX = 10_000;
const TOUCH_EVERY_MS = 60_000;

export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: 'invalid' | 'revoked' | 'expired' };

export class Authenticator {
  readonly #db: Db;
  // The principal is built once per cache entry and shared by its requests: it is never mutated.
  readonly #cache = new Map<string, { row: AuthKeyRow | undefined; principal: Principal | null; at: number }>();
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

  #check({ row, principal }: { row: AuthKeyRow | undefined; principal: Principal | null }, now: number): AuthResult {
    if (!row || !principal) return { ok: false, reason: 'invalid' };
    const status = keyStatus(row, now);
    if (status !== 'active') return { ok: false, reason: status };
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

function toPrincipal(row: AuthKeyRow): Principal {
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
