// Which external services the tests can use. PostgreSQL and Redis are probed once per test
// process. On a laptop without them the suites that need them are not registered (and the global
// setup says so loudly); under CI=true their absence fails the run instead.
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

let cached: Promise<{ postgres: boolean; redis: boolean }> | undefined;

export function services(): Promise<{ postgres: boolean; redis: boolean }> {
  cached ??= Promise.all([probePostgres(), probeTcp(TEST_REDIS_URL)]).then(([postgres, redis]) => ({ postgres, redis }));
  return cached;
}
