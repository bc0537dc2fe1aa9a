// Under `--workers N` a scrape of /metrics reaches one worker, so that worker asks the primary for
// the sum over all workers (prom-client's AggregatorRegistry collects every worker's registry
// over the cluster's IPC channel). Counters and histograms add up; pool gauges add up to the
// machine's connections.
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

interface MetricsRequest {
  rolodex: 'metrics-get';
  id: number;
}
interface MetricsReply {
  rolodex: 'metrics';
  id: number;
  text?: string;
  error?: string;
}

const TIMEOUT_MS = 5000;

/** In the primary: answers workers' requests with the whole cluster's metrics. */
export function serveClusterMetrics(cluster: { on(event: 'message', fn: (worker: Worker, message: unknown) => void): unknown }): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, m) => {
    if (typeof m !== 'object' || m === null || (m as MetricsRequest).rolodex !== 'metrics-get') return;
    const id = (m as MetricsRequest).id;
    const send = (reply: MetricsReply) => worker.isConnected() && worker.send(reply);
    aggregator.clusterMetrics().then(
      (text) => send({ rolodex: 'metrics', id, text }),
      (err: Error) => send({ rolodex: 'metrics', id, error: err.message }),
    );
  });
}

/** In a worker: offers `registry` to the primary and returns the function /metrics answers with. */
export function clusterMetricsText(registry: Registry): () => Promise<string> {
  // Constructing one makes prom-client answer the primary's requests in this worker.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  return () =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const onMessage = (m: unknown) => {
        const r = m as MetricsReply;
        if (typeof m !== 'object' || m === null || r.rolodex !== 'metrics' || r.id !== id) return;
        done();
        if (r.text !== undefined) resolve(r.text);
        else reject(new Error(r.error ?? 'no metrics from the primary'));
      };
      const timer = setTimeout(() => {
        done();
        resolve(registry.metrics());
      }, TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        process.off('message', onMessage);
      };
      process.on('message', onMessage);
      process.send?.({ rolodex: 'metrics-get', id } satisfies MetricsRequest);
    });
}
