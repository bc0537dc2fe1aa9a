// Preloaded (--import) into a server's main process: when the start removes its first stop-signal
// listener, it first raises SIGTERM, synchronously, as a signal sent while the start still runs
// synchronously (a migration) arrives: caught by the process, not yet dispatched to a listener.
// test/ops/stop-at-ready.test.ts checks that such a signal still stops the server.
import cluster from 'node:cluster';

if (cluster.isPrimary) {
  const off = process.off.bind(process);
  let raised = false;
  process.off = process.removeListener = (name, listener) => {
    if (name === 'SIGTERM' && !raised) {
      raised = true;
      process.kill(process.pid, 'SIGTERM');
    }
    return off(name, listener);
  };
}
