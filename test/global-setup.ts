// Runs once before the whole suite: says loudly which services are missing, and under CI=true
// refuses to run without them (a missing database must fail CI, never skip it).
import { buildTemplates, removeTemplates } from './helpers/db-templates.ts';
import { IN_CI, probeServices, publishServices, TEST_DATABASE_URL, TEST_REDIS_URL } from './helpers/services.ts';

export async function globalSetup(): Promise<void> {
  const s = await probeServices();
  publishServices(s);
  const missing: string[] = [];
  if (!s.postgres) missing.push(`PostgreSQL at ${TEST_DATABASE_URL} (set TEST_DATABASE_URL)`);
  if (!s.redis) missing.push(`Redis at ${TEST_REDIS_URL} (set TEST_REDIS_URL)`);
  if (missing.length === 0) {
    await buildTemplates(TEST_DATABASE_URL);
    return;
  }
  const banner = '!'.repeat(78);
  const text = [
    banner,
    `!! NOT REACHABLE: ${missing.join('; ')}`,
    IN_CI ? '!! CI=true: this is a failure.' : '!! The tests that need them are NOT RUN. Only part of the suite runs.',
    banner,
  ].join('\n');
  process.stderr.write(`\n${text}\n\n`);
  if (IN_CI) throw new Error(`required services missing under CI: ${missing.join('; ')}`);
  await buildTemplates(s.postgres ? TEST_DATABASE_URL : undefined);
}

export function globalTeardown(): void {
  removeTemplates();
}
