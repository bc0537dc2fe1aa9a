// An open-loop stream of `POST /v1/contacts` for benches that measure a server's writes beside
// other work (bench/import-sharing.ts, bench/statistics-sharing.ts): each request leaves at its
// scheduled time whatever the earlier ones are doing, and its latency counts from that time.

export interface Stream {
  latencies: number[];
  failures: string[];
  /** The writes that took over the slow bound: seconds from the stream's start to the write's scheduled time, and its latency. */
  slow: Array<{ at: number; ms: number }>;
}

/** POSTs at `rate` per second until `until` resolves; writes over `slowMs` are noted with their time. */
export async function streamWrites(url: string, secret: string, rate: number, until: Promise<unknown>, slowMs = 100): Promise<Stream> {
  const out: Stream = { latencies: [], failures: [], slow: [] };
  let done = false;
  // Ends when `until` settles either way; the caller awaits it for its outcome.
  void until.then(
    () => (done = true),
    () => (done = true),
  );
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  if (rate <= 0) await until;
  for (let i = 0; !done; i++) {
    const at = t0 + (i * 1000) / rate;
    const wait = at - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (done) break;
    pending.push(
      (async () => {
        try {
          const res = await fetch(`${url}/v1/contacts`, {
            method: 'POST',
            headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'service-version': '2026-03-01' },
            body: JSON.stringify({ fields: { $name: { firstName: 'Bo', lastName: `W${i}` }, $email: [`bo.${i}@stream.test`] } }),
          });
          const body = await res.text();
          const ms = performance.now() - at;
          out.latencies.push(ms);
          if (ms > slowMs) out.slow.push({ at: (at - t0) / 1000, ms });
          if (res.status !== 200) out.failures.push(`${res.status} ${body.slice(0, 200)}`);
        } catch (err) {
          out.failures.push(String(err));
        }
      })(),
    );
  }
  await Promise.all(pending);
  return out;
}

export function quantile(s: Stream, q: number): number {
  const sorted = [...s.latencies].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
}

/** The slowest writes over the slow bound (up to 10), each as `latency@seconds into the stream`. */
export function slowest(s: Stream): string {
  const top = [...s.slow].sort((a, b) => b.ms - a.ms).slice(0, 10);
  return top.map((w) => `${w.ms.toFixed(0)} ms@${w.at.toFixed(1)} s`).join(', ');
}

export function summary(s: Stream): string {
  const sorted = [...s.latencies].sort((a, b) => a - b);
  const at = (q: number) => quantile(s, q).toFixed(1);
  return `${sorted.length} writes  p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  max ${(sorted[sorted.length - 1] ?? NaN).toFixed(0)} ms  failed ${s.failures.length}`;
}
