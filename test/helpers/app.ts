// Builds the real app on a fresh database of the given dialect, with helpers to seed workspaces,
// users and keys, to call the API through app.inject, and to read what the server logged.
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createDiskBlobStore } from '../../src/blobs/disk.ts';
import { createKey } from '../../src/auth/service.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import type { DialectName } from '../../src/db/types.ts';
import { Authenticator } from '../../src/auth/authenticator.ts';
import type { Deps } from '../../src/http/context.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics/registry.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createUser } from '../../src/users/service.ts';
import { prepareServerDatabase } from '../../src/server-deps.ts';
import { createTestDb, type TestDb, testDialects } from './db.ts';

export const VERSION = '2026-03-01';

export interface TestApp {
  dialect: DialectName;
  app: FastifyInstance;
  config: Config;
  deps: Deps;
  tdb: TestDb;
  /** Everything the server logged so far. */
  logs(): string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** A function is called when the app is built: for values known only once a `before` hook ran. */
  env?: Record<string, string> | (() => Record<string, string>);
  /** Adjusts the dependencies before the app is built (a rate limiter, a blob store…). */
  deps?: (deps: Deps, config: Config) => Promise<void> | void;
  /** Extra routes for tests of the shared pipeline, registered before the app is ready. */
  routes?: (app: FastifyInstance, deps: Deps) => void;
}

export async function buildTestApp(dialect: DialectName, opts: TestAppOptions = {}): Promise<TestApp> {
  const tdb = await createTestDb(dialect);
  const config = loadConfig({
    DATA_DIR: tdb.dataDir,
    LOG_LEVEL: 'info',
    PUBLIC_BASE_URL: 'http://rolodex.test',
    RATE_LIMIT_READ: '0',
    RATE_LIMIT_WRITE: '0',
    RATE_LIMIT_SEARCH: '0',
    ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
    ...(typeof opts.env === 'function' ? opts.env() : opts.env),
  });
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger('info', sink);
  const deps: Deps = { db: tdb.db, logger, auth: new Authenticator(tdb.db), blobs: createDiskBlobStore(join(tdb.dataDir, 'blobs')), metrics: createMetrics() };
  // What the server's start does after migrating (src/runtime.ts), before any test replaces deps.
  await prepareServerDatabase(tdb.db, config);
  await opts.deps?.(deps, config);
  let app: FastifyInstance;
  try {
    app = await buildApp(config, deps);
    opts.routes?.(app, deps);
    await app.ready();
  } catch (err) {
    await deps.blobs.close();
    await tdb.drop();
    throw err;
  }
  return {
    dialect,
    app,
    config,
    deps,
    tdb,
    logs: () => chunks.join(''),
    close: async () => {
      await app.close();
      await deps.rateLimiter?.close();
      await deps.blobs.close();
      await tdb.drop();
    },
  };
}

/**
 * Registers `fn`'s tests once per dialect (SQLite, and PostgreSQL when reachable), each with its
 * own fresh app and database.
 */
export function eachDialect(name: string, fn: (ctx: () => TestApp) => void, opts: TestAppOptions = {}): void {
  for (const dialect of testDialects()) {
    describe(`${name} [${dialect}]`, () => {
      let t: TestApp | undefined;
      before(async () => {
        t = await buildTestApp(dialect, opts);
      });
      after(async () => {
        await t?.close();
      });
      fn(() => {
        if (!t) throw new Error('test app not built');
        return t;
      });
    });
  }
}

export interface Seeded {
  workspaceId: string;
  userId: string;
  secret: string;
}

/** A workspace with one user and a key for it (full access unless scopes are given). */
export async function seedWorkspace(t: TestApp, opts: { scopes?: Scope[]; role?: 'admin' | 'member' } = {}): Promise<Seeded> {
  const db = t.deps.db.kysely;
  const ws = await createWorkspace(systemCtx(db), { name: 'Test workspace' });
  const ctx = operatorCtx(db, ws.id);
  const user = await createUser(ctx, { email: `u${Math.random().toString(36).slice(2)}@example.test`, role: opts.role ?? 'admin' });
  const key = await createKey(ctx, { userId: user.id, scopes: opts.scopes ?? null, expiresInMs: null });
  return { workspaceId: ws.id, userId: user.id, secret: key.secret };
}

export async function keyFor(t: TestApp, workspaceId: string, userId: string | null, scopes: Scope[] | null = null): Promise<string> {
  return (await createKey(operatorCtx(t.deps.db.kysely, workspaceId), { userId, scopes, expiresInMs: null })).secret;
}

export function headers(secret: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${secret}`, 'service-version': VERSION, ...extra };
}

/** Calls the API as the holder of `secret`; JSON bodies are sent as JSON. */
export async function call(
  t: TestApp,
  secret: string,
  method: InjectOptions['method'],
  url: string,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<LightMyRequestResponse & { body: string; json(): any }> {
  return t.app.inject({
    method,
    url,
    headers: headers(secret, body === undefined ? extra : { 'content-type': 'application/json', ...extra }),
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}
