// The program each cluster worker runs (src/cluster.ts forks it): the server, as a worker.
import { loadConfig } from './config.ts';
import { startServer } from './server.ts';

if (import.meta.main) {
  await startServer(loadConfig(process.env), { worker: true });
  process.send?.({ rolodex: 'worker-listening' });
}
