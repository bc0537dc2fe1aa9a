// The program each cluster worker runs (src/cluster.ts forks it): the server, as a worker. It
// tells the primary once it listens (and on which port), or why it cannot: a port that cannot
// be bound stops the whole cluster with one line rather than a restart loop.
import cluster from 'node:cluster';
import { loadConfig } from './config.ts';
import { ListenError } from './lifecycle.ts';
import { startServer } from './server.ts';

if (import.meta.main) {
  try {
    // The first worker alone checks the blob store at start, so that a cluster says it once.
    const app = await startServer(loadConfig(process.env), { worker: true, checkBlobStore: cluster.worker?.id === 1 });
    const addr = app.server.address();
    process.send?.({ rolodex: 'worker-listening', port: typeof addr === 'object' && addr ? addr.port : undefined });
  } catch (err) {
    if (!(err instanceof ListenError)) console.error(`rolodex worker ${process.pid} failed to start: ${(err as Error).stack ?? String(err)}`);
    const message = err instanceof ListenError ? err.message : undefined;
    // Exits once the message is on its way, so the primary hears why before it sees the exit.
    if (process.send) process.send({ rolodex: 'worker-failed', message }, () => process.exit(1));
    else process.exit(1);
  }
}
