// Configuration is read from the environment once, at start-up, and passed down. A wrong value
// stops the process with a message naming the variable and what it expects.
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { keptSigningSecret, resolveDataDir } from './data-dir.ts';
import { baseUrl, bool, type Env, int, onOff, url } from './config-values.ts';
import { ConfigError } from './lib/errors.ts';
import { webOrigin } from './lib/origin.ts';

export interface S3Config {
  bucket: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  prefix: string;
}

/** Delivery of sent e-mail (docs/emails.md §Delivery). */
export interface MailConfig {
  /** smtp:// or smtps://; unset: the log transport. */
  smtpUrl?: string;
  /** Whether this process runs a dispatcher. */
  dispatch: boolean;
  /** How often an idle dispatcher looks for due mail. */
  pollMs: number;
  /** How long a claim holds its rows without renewal before another dispatcher may take them. */
  leaseMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts before a message is given up as failed. */
  maxAttempts: number;
  /** Messages delivered at once by one dispatcher. */
  concurrency: number;
}

/** Delivery of outbound webhooks (docs/events.md §Delivery). */
export interface WebhookConfig {
  /** Whether this process runs a webhook dispatcher. */
  dispatch: boolean;
  pollMs: number;
  leaseMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** An endpoint failing this long is disabled (24 hours). */
  disableAfterMs: number;
  /** How long one POST may take. */
  timeoutMs: number;
  concurrency: number;
  /** Whether private, loopback and link-local addresses may be targets. */
  allowPrivate: boolean;
}

/** Enrichment runs (docs/enrichment.md). */
export interface EnrichmentConfig {
  /** off: no run starts; manual: runs on request; on-create: also one for every account and contact created through the API. */
  mode: 'off' | 'manual' | 'on-create';
  /** Lets the website provider reach private, loopback and link-local addresses (tests, closed networks). */
  allowPrivate: boolean;
  /** How often an idle runner looks for due runs. */
  pollMs: number;
  /** How long a claim holds a run without renewal before another runner may take it. */
  leaseMs: number;
  /** How long a run may take before it ends as timed_out. */
  timeoutMs: number;
  /** Claims of a run (its first included) before a run left by a dead process is failed. */
  maxAttempts: number;
  /** Runs one runner executes at once. */
  concurrency: number;
  /** How long a round may wait while the process is busy with requests; 0: rounds never wait. */
  maxDeferMs: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  publicBaseUrl: string;
  publicAppUrl?: string;
  logLevel: string;
  /**
   * The key of upload and download addresses: SIGNING_SECRET, else DATA_DIR/signing-secret, made
   * there on the first call and the same value after (docs/config.md §Data directory). Only what
   * signs or verifies addresses calls it, so that no other command writes to DATA_DIR.
   */
  signingSecret: () => Buffer;
  workers: number;
  rateLimits: { Read: number; Write: number; Search: number };
  /** How long tokens leased from Redis or the cluster primary serve one process (src/rate-limit/lease.ts); 0: none. */
  rateLimitLeaseMs: number;
  redisUrl?: string;
  s3?: S3Config;
  uploadTtlSeconds: number;
  downloadTtlSeconds: number;
  sweepIntervalSeconds: number;
  /** Days a record stays in the trash before the sweeper purges it; 0 keeps it (docs/trash.md). */
  trashRetentionDays: number;
  /** Every header name accepted as the version header, as configured; Service-Version among them. */
  versionHeaders: string[];
  mail: MailConfig;
  /** Whether /mcp is served (docs/mcp.md). */
  mcp: boolean;
  /** The origins a browser may call /mcp from (docs/mcp.md §Origins): PUBLIC_BASE_URL's and MCP_ALLOWED_ORIGINS, or any. */
  mcpOrigins: readonly string[] | 'any';
  /** PostgreSQL: the server's limit on one statement of `serve`, and the process's wait for an answer (+1 s); 0: none (docs/reliability.md §Lost connections). */
  databaseStatementTimeoutMs: number;
  /** PostgreSQL: how long a connection attempt may take, every command's first one included. */
  databaseConnectTimeoutMs: number;
  /** How long /readyz waits for the database's answer before it answers 503. */
  readinessTimeoutMs: number;
  /** Open client connections one process keeps; one more is closed at once. 0: no cap (docs/deploy.md §Client connections). */
  maxConnections: number;
  /**
   * How long a kept-alive connection with no request in flight stays open; longer than the idle
   * timeout of a proxy in front (docs/deploy.md §Client connections).
   */
  keepAliveTimeoutMs: number;
  /** /healthz fails when a transaction has waited this long for a connection (docs/deploy.md §Probes). */
  livenessStallMs: number;
  /** How long a Redis command of the rate limiter may take before the local buckets answer. */
  redisCommandTimeoutMs: number;
  webhooks: WebhookConfig;
  /** Days events are kept (docs/events.md); 0 keeps them forever. */
  eventRetentionDays: number;
  enrichment: EnrichmentConfig;
}

/** A wrong environment variable; `param` names it. */
export { ConfigError };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

// The signing secret protects upload and download capabilities. When not given, one is generated
// and kept in the data directory so that restarts (and sibling workers) agree on it. A given one is
// checked here, with the rest of the configuration; the file is read, or made, on the first call.
function signingSecret(env: Env, dataDir: string): () => Buffer {
  const given = env.SIGNING_SECRET;
  if (given !== undefined && given !== '') {
    if (given.length < 32) throw new ConfigError('SIGNING_SECRET must be at least 32 characters', 'SIGNING_SECRET');
    const secret = Buffer.from(given, 'utf8');
    return () => secret;
  }
  let kept: Buffer | undefined;
  return () => (kept ??= keptSigningSecret(join(dataDir, 'signing-secret'), dataDir));
}

function s3(env: Env): S3Config | undefined {
  const bucket = env.S3_BUCKET;
  if (bucket === undefined || bucket === '') return undefined;
  const endpoint = url(env, 'S3_ENDPOINT', ['http:', 'https:']);
  // One of the two alone was dropped for the SDK's default chain, which then used other
  // credentials than the operator meant, or none.
  if (!env.S3_ACCESS_KEY_ID !== !env.S3_SECRET_ACCESS_KEY)
    throw new ConfigError(
      `S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together (only ${env.S3_ACCESS_KEY_ID ? 'S3_ACCESS_KEY_ID' : 'S3_SECRET_ACCESS_KEY'} is set); unset both for the AWS SDK's default chain`,
      env.S3_ACCESS_KEY_ID ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID',
    );
  return {
    bucket,
    region: env.S3_REGION || 'us-east-1',
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', endpoint !== undefined),
    ...(env.S3_ACCESS_KEY_ID ? { accessKeyId: env.S3_ACCESS_KEY_ID } : {}),
    ...(env.S3_SECRET_ACCESS_KEY ? { secretAccessKey: env.S3_SECRET_ACCESS_KEY } : {}),
    prefix: env.S3_PREFIX ?? '',
  };
}

function mail(env: Env): MailConfig {
  const smtpUrl = url(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  return {
    ...(smtpUrl ? { smtpUrl } : {}),
    dispatch: bool(env, 'EMAIL_DISPATCH', true),
    pollMs: int(env, 'EMAIL_POLL_MS', 1000, 10, 60_000),
    leaseMs: int(env, 'EMAIL_LEASE_MS', 60_000, 1000, 3_600_000),
    retryBaseMs: int(env, 'EMAIL_RETRY_BASE_MS', 10_000, 10, 86_400_000),
    retryMaxMs: int(env, 'EMAIL_RETRY_MAX_MS', 3_600_000, 10, 7 * 86_400_000),
    maxAttempts: int(env, 'EMAIL_MAX_ATTEMPTS', 20, 1, 1000),
    concurrency: int(env, 'EMAIL_CONCURRENCY', 4, 1, 64),
  };
}

function webhooks(env: Env): WebhookConfig {
  return {
    dispatch: bool(env, 'WEBHOOK_DISPATCH', true),
    pollMs: int(env, 'WEBHOOK_POLL_MS', 500, 10, 60_000),
    leaseMs: int(env, 'WEBHOOK_LEASE_MS', 60_000, 1000, 3_600_000),
    retryBaseMs: int(env, 'WEBHOOK_RETRY_BASE_MS', 5_000, 10, 86_400_000),
    retryMaxMs: int(env, 'WEBHOOK_RETRY_MAX_MS', 3_600_000, 10, 86_400_000),
    disableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER_MS', 86_400_000, 1000, 30 * 86_400_000),
    timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 16, 1, 256),
    allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
  };
}

const ENRICHMENT_MODES = ['off', 'manual', 'on-create'] as const;

function enrichment(env: Env): EnrichmentConfig {
  const mode = env.ENRICHMENT || 'manual';
  if (!(ENRICHMENT_MODES as readonly string[]).includes(mode))
    throw new ConfigError(`ENRICHMENT must be one of ${ENRICHMENT_MODES.join(', ')} (got "${mode}")`, 'ENRICHMENT');
  const timeoutMs = int(env, 'ENRICH_TIMEOUT_MS', 30_000, 100, 600_000);
  return {
    mode: mode as EnrichmentConfig['mode'],
    allowPrivate: bool(env, 'ENRICH_ALLOW_PRIVATE', false),
    pollMs: int(env, 'ENRICH_POLL_MS', 1000, 10, 60_000),
    // The lease outlasts the timeout, so a live runner never loses a run it is still allowed to finish.
    leaseMs: int(env, 'ENRICH_LEASE_MS', Math.max(60_000, timeoutMs * 2), timeoutMs + 1000, 3_600_000),
    timeoutMs,
    maxAttempts: int(env, 'ENRICH_MAX_ATTEMPTS', 3, 1, 100),
    concurrency: int(env, 'ENRICH_CONCURRENCY', 4, 1, 64),
    // At most a minute, so that an on-create runner still moves or touches its cursor about as often as CURSOR_BEAT_MS says.
    maxDeferMs: int(env, 'ENRICH_MAX_DEFER_MS', 10_000, 0, 60_000),
  };
}

// RFC 9110 token characters: what a header name may be made of.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Headers the service reads for another purpose: naming one as a version header would be a mistake.
const TAKEN_HEADERS = ['authorization', 'content-type', 'content-length', 'host', 'idempotency-key', 'x-request-id', 'range', 'if-range'];

/** The names accepted when VERSION_HEADERS is unset: the hosted original's SDKs send Lightfield-Version. */
export const DEFAULT_VERSION_HEADERS: readonly string[] = ['Service-Version', 'Lightfield-Version'];

/** VERSION_HEADERS: the names accepted as the version header (docs/design.md §Requests). */
function versionHeaders(env: Env): string[] {
  const raw = env.VERSION_HEADERS;
  if (raw === undefined || raw.trim() === '') return [...DEFAULT_VERSION_HEADERS];
  const fail = (why: string) =>
    new ConfigError(`VERSION_HEADERS must be a comma-separated list of header names including Service-Version: ${why} (got "${raw}")`, 'VERSION_HEADERS');
  const names = raw.split(',').map((n) => n.trim());
  const seen = new Set<string>();
  for (const name of names) {
    if (name === '') throw fail('a name is empty');
    if (!HEADER_NAME.test(name)) throw fail(`"${name}" is not a valid header name`);
    const lower = name.toLowerCase();
    if (TAKEN_HEADERS.includes(lower)) throw fail(`"${name}" is used by the service for another purpose`);
    if (seen.has(lower)) throw fail(`"${name}" is named twice`);
    seen.add(lower);
  }
  if (!seen.has('service-version')) throw fail('Service-Version is missing');
  return names;
}

/** PUBLIC_BASE_URL's origin and those of MCP_ALLOWED_ORIGINS, serialized as browsers send them; `*`: any. */
function mcpOrigins(env: Env, publicBaseUrl: string): readonly string[] | 'any' {
  const raw = env.MCP_ALLOWED_ORIGINS?.trim() ?? '';
  if (raw === '*') return 'any';
  const own = new URL(publicBaseUrl).origin;
  if (raw === '') return [own];
  const origins = raw.split(',').map((o) => {
    const origin = webOrigin(o.trim());
    if (origin) return origin;
    throw new ConfigError(
      `MCP_ALLOWED_ORIGINS must be * or a comma-separated list of origins such as https://app.example.com: "${o.trim()}" is not one (got "${raw}")`,
      'MCP_ALLOWED_ORIGINS',
    );
  });
  return [...new Set([own, ...origins])];
}

/**
 * HOST: what the server listens on, an IP address or a name that resolves to one of this
 * machine's (docs/deploy.md §Start and stop). A scheme, a port or the brackets of an IPv6 address
 * in a URL are no part of it; written with them it would be looked up as a name and make no
 * default PUBLIC_BASE_URL, so it is refused here, naming the variable.
 */
function hostOf(env: Env): string {
  const host = env.HOST || '127.0.0.1';
  if (isIP(host) === 0 && !/^[^\s/:@?#%[\]\\]+$/.test(host))
    throw new ConfigError(`HOST must be an IP address or a host name, without a scheme, port or brackets (got "${host}")`, 'HOST');
  return host;
}

/** PUBLIC_BASE_URL, else `http://HOST:PORT` (127.0.0.1 for a HOST of every interface). */
function publicBase(env: Env, host: string, port: number): string {
  const given = baseUrl(env, 'PUBLIC_BASE_URL');
  if (given) return given;
  const publicHost = everyInterface(host) ? '127.0.0.1' : host;
  const made = `http://${publicHost.includes(':') ? `[${publicHost}]` : publicHost}:${port}`;
  // An IPv6 address with its zone (fe80::1%eth0) is an address to listen on that no URL holds.
  if (!URL.canParse(made)) throw new ConfigError(`PUBLIC_BASE_URL must be set: HOST "${host}" makes no URL (${made})`, 'PUBLIC_BASE_URL');
  return made;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = hostOf(env);
  const dataDir = resolveDataDir(env.DATA_DIR);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`, 'LOG_LEVEL');
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const s3Config = s3(env);
  const publicBaseUrl = publicBase(env, host, port);
  return {
    port,
    host,
    dataDir,
    ...(databaseUrl ? { databaseUrl } : {}),
    publicBaseUrl,
    ...(env.PUBLIC_APP_URL ? { publicAppUrl: baseUrl(env, 'PUBLIC_APP_URL') } : {}),
    logLevel,
    signingSecret: signingSecret(env, dataDir),
    workers: int(env, 'WORKERS', availableParallelism(), 1, 256),
    rateLimits: {
      Read: int(env, 'RATE_LIMIT_READ', 25, 0, 1_000_000),
      Write: int(env, 'RATE_LIMIT_WRITE', 25, 0, 1_000_000),
      Search: int(env, 'RATE_LIMIT_SEARCH', 25, 0, 1_000_000),
    },
    rateLimitLeaseMs: int(env, 'RATE_LIMIT_LEASE_MS', 10, 0, 100),
    ...(redisUrl ? { redisUrl } : {}),
    ...(s3Config ? { s3: s3Config } : {}),
    uploadTtlSeconds: int(env, 'UPLOAD_TTL_SECONDS', 3600, 60, 7 * 86400),
    downloadTtlSeconds: int(env, 'DOWNLOAD_TTL_SECONDS', 900, 10, 7 * 86400),
    sweepIntervalSeconds: int(env, 'SWEEP_INTERVAL_SECONDS', 60, 1, 86400),
    trashRetentionDays: int(env, 'TRASH_RETENTION_DAYS', 30, 0, 36500),
    versionHeaders: versionHeaders(env),
    mail: mail(env),
    mcp: onOff(env, 'MCP', true),
    mcpOrigins: mcpOrigins(env, publicBaseUrl),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 3_600_000),
    databaseConnectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 10_000, 100, 300_000),
    readinessTimeoutMs: int(env, 'READINESS_TIMEOUT_MS', 2000, 100, 60_000),
    maxConnections: int(env, 'MAX_CONNECTIONS', 10_000, 0, 1_000_000),
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 10_000, 1000, 600_000),
    livenessStallMs: int(env, 'LIVENESS_STALL_MS', 30_000, 100, 3_600_000),
    redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 200, 1, 10_000),
    webhooks: webhooks(env),
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 30, 0, 36_500),
    enrichment: enrichment(env),
  };
}

/**
 * Whether HOST is the address of every interface, however an IPv6 one is written (`::`, `::0`,
 * `0:0:0:0:0:0:0:0` are one address), which is no address to give clients: they get 127.0.0.1.
 */
export function everyInterface(host: string): boolean {
  if (isIP(host) === 4) return host === '0.0.0.0';
  return isIP(host) === 6 && URL.canParse(`http://[${host}]`) && new URL(`http://[${host}]`).hostname === '[::]';
}
