// Which external services the tests can use. The global setup probes PostgreSQL and Redis once
// per run and hands the answer to every test process in ROLODEX_TEST_SERVICES, so that a test file
// registers all its suites synchronously: node:test runs a file's root `after` hooks as soon as the
// tests registered so far are done, and a suite registered after a top-level await may start after
// them. On a laptop without the services the suites that need them are not registered (and the
// global setup says so loudly); under CI=true their absence fails the run instead.
import { createConnection } from 'node:net';
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
export const IN_CI = process.env.CI === 'true';

async function probePostgres(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function probeTcp(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: u.hostname, port: Number(u.port || 6379), timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export interface Services {
  postgres: boolean;
  redis: boolean;
}

const ENV = 'ROLODEX_TEST_SERVICES';
let cached: Promise<Services> | undefined;

/** Probes the services once per process: for the global setup and the benchmarks. */
export function probeServices(): Promise<Services> {
  cached ??= Promise.all([probePostgres(), probeTcp(TEST_REDIS_URL)]).then(([postgres, redis]) => ({ postgres, redis }));
  return cached;
}

/** Hands the probe's answer to the test processes the runner starts after the global setup. */
export function publishServices(s: Services): void {
  process.env[ENV] = Object.entries(s)
    .filter(([, up]) => up)
    .map(([name]) => name)
    .join(',');
}

/** The services the global setup found, known without waiting. */
export function services(): Services {
  const published = process.env[ENV];
  if (published === undefined) throw new Error(`${ENV} is not set: run the tests by npm test (npm test -- FILE for some)`);
  const up = new Set(published.split(','));
  return { postgres: up.has('postgres'), redis: up.has('redis') };
}
