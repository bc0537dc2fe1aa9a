import { loadConfig } from '../config.ts';
import { prepareServing } from '../data-dir.ts';
import { noteAddress, probePort } from '../lifecycle.ts';
import { ConfigError } from '../lib/errors.ts';
import { type Io, parse, UsageError } from './io.ts';

export const usage = `rolodex serve [--port N] [--host H] [--workers N]   (what npm start runs; workers default to the number of cores)`;

/** The flags of `serve` and the variables they set. */
const FLAGS: Record<string, string> = { port: 'PORT', host: 'HOST', workers: 'WORKERS' };

export async function run(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, { port: { type: 'string' }, host: { type: 'string' }, workers: { type: 'string' } });
  const env = { ...io.env };
  const given = Object.entries(FLAGS).filter(([flag]) => values[flag] !== undefined);
  for (const [flag, variable] of given) env[variable] = String(values[flag]);
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    // A wrong value given as a flag is wrong usage of that flag, named as given, not as the
    // variable it sets.
    const wrong = given.find(([, variable]) => err instanceof ConfigError && err.param === variable);
    if (wrong) throw new UsageError(`--${wrong[0]}${(err as Error).message.slice(wrong[1].length)}`, wrong[0]);
    throw err;
  }
  // DATA_DIR and the signing secret first, so that a damaged one stops the server before its workers.
  prepareServing(config);
  // Before the server's modules load, so that a port in use is told at once.
  await probePort(config.port, config.host);
  if (config.workers > 1) {
    const { runCluster } = await import('../cluster.ts');
    noteAddress(config.dataDir, config.host, await (await runCluster(config, env)).ready);
    return;
  }
  const { startServer } = await import('../server.ts');
  const app = await startServer(config);
  const addr = app.server.address();
  if (typeof addr === 'object' && addr) noteAddress(config.dataDir, config.host, addr.port);
  const where = typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : String(addr);
  app.log.info({ address: where, database: config.databaseUrl ? 'postgres' : 'sqlite', dataDir: config.dataDir }, `rolodex listening on ${where}`);
}
