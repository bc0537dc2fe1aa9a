// What every route and hook can rely on: the dependencies built at start-up, and the per-route
// declarations (operation name, scopes, rate category) that the pipeline enforces.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { Principal, Scope } from '../auth/scopes.ts';
import type { ErrorCode } from '../lib/errors.ts';
import type { HttpLinks } from '../lib/links.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { Faults } from './fault-log.ts';
import type { RateCategory, RateLimiter } from '../rate-limit/bucket.ts';

export interface Deps {
  db: Db;
  logger: Logger;
  auth: Authenticator;
  blobs: BlobStore;
  rateLimiter?: RateLimiter;
  /** buildApp makes its own when absent; given when the rate limiter needs to count into it. */
  metrics?: Metrics;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The operational faults met now, and their log lines (src/http/fault-log.ts). */
    faults: Faults;
  }
  interface FastifyContextConfig {
    operation?: string;
    scopes?: readonly Scope[];
    /**
     * A key must hold one of these: for an operation whose scope depends on what it reads (a run's
     * record type), the scopes one of which it needs whatever it reads, refused at the scope step,
     * before input validation (docs/design.md §Requests).
     */
    anyScopes?: readonly Scope[];
    category?: RateCategory;
    idempotent?: boolean;
    errors?: readonly ErrorCode[];
    /**
     * The body may be absent, which is read as `{}` (src/http/validation.ts); one that is sent,
     * `null` included, is validated as the body schema says. The OpenAPI document marks the body
     * not required (src/http/openapi.ts).
     */
    optionalBody?: boolean;
  }
  interface FastifyRequest {
    /** The caller (set by the pipeline on every /v1 route); the actor of the services' ctx. */
    principal: Principal;
    /** ms since epoch when the request arrived; one clock for a whole request. */
    startedAt: number;
    /** Ends the request's budget of waits on the database once it has answered (src/db/request-budget.ts). */
    endBudget: () => void;
  }
}

export const SERVICE_VERSION = '2026-03-01';
export const SUPPORTED_VERSIONS = [SERVICE_VERSION] as const;

/** What each resource's route plugin receives: all of it built once, by buildApp. */
export interface PluginOptions {
  config: Config;
  deps: Deps;
  links: HttpLinks;
  metrics: Metrics;
}
