// The CLI run in-process against a test app's database, as an operator runs it: exit code, and
// what it wrote to stdout and stderr (lines joined by newlines).
import type { Io } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { TestApp } from './app.ts';

/** The CLI run in-process with `env` as its whole environment: stdout joined, stderr as its lines. */
export async function rolodexWith(env: Record<string, string>, args: string[]): Promise<{ code: number; out: string; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env, isTty: false };
  const code = await main(args, io);
  return { code, out: out.join('\n'), err };
}

export async function rolodex(t: TestApp, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const env = { DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
  const r = await rolodexWith(env, args);
  return { ...r, err: r.err.join('\n') };
}
