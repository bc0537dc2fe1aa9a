// Commit signals on SQLite (src/db/signals.ts, docs/events.md §Delivery). The processes that share
// a database file are the workers of one `rolodex serve` (src/cluster.ts): a worker's signal goes
// to the primary over the cluster's IPC, and the primary relays it to every other worker, as it
// does the rate-limit buckets' and metrics' messages. Within a process, every handle open on the
// same file hears it. Signals of the same turn go out as one message per channel. A process
// outside the cluster (the CLI) is heard by none, and its work is found by the listeners' polls.
import cluster, { type Worker } from 'node:cluster';
import { resolve } from 'node:path';
import { Listeners, type SignalHub } from '../signals.ts';

interface SignalMessage {
  rolodex: 'db-signal';
  file: string;
  channel: string;
}

function isSignal(m: unknown): m is SignalMessage {
  const s = m as Partial<SignalMessage> | null;
  return s?.rolodex === 'db-signal' && typeof s.file === 'string' && typeof s.channel === 'string';
}

/** The listening handles of this process, by file. */
const open = new Map<string, Set<Listeners>>();

function emit(file: string, channel: string): void {
  for (const l of open.get(file) ?? []) l.emit(channel);
}

const fromPrimary = (m: unknown): void => {
  if (isSignal(m)) emit(m.file, m.channel);
};

/** Per file, the channels to send to the primary at the end of this turn. */
const outgoing = new Map<string, Set<string>>();

function toPrimary(file: string, channel: string): void {
  if (!cluster.isWorker || !process.send) return;
  if (outgoing.size === 0)
    setImmediate(() => {
      for (const [f, channels] of outgoing) for (const c of channels) process.send?.({ rolodex: 'db-signal', file: f, channel: c } satisfies SignalMessage);
      outgoing.clear();
    });
  let set = outgoing.get(file);
  if (!set) outgoing.set(file, (set = new Set()));
  set.add(channel);
}

export function sqliteSignals(path: string): SignalHub {
  const file = resolve(path);
  const listeners = new Listeners();
  let joined = false;
  return {
    send(channel) {
      emit(file, channel);
      toPrimary(file, channel);
    },
    listen(channel, fn) {
      if (!joined) {
        joined = true;
        if (open.size === 0 && cluster.isWorker) process.on('message', fromPrimary);
        let set = open.get(file);
        if (!set) open.set(file, (set = new Set()));
        set.add(listeners);
      }
      return listeners.add(channel, fn);
    },
    async close() {
      if (!joined) return;
      const set = open.get(file);
      set?.delete(listeners);
      if (set?.size === 0) open.delete(file);
      if (open.size === 0 && cluster.isWorker) process.off('message', fromPrimary);
    },
  };
}

/** In the cluster's primary: relays each worker's signals to the other workers. */
export function relayClusterSignals(c: { on(event: 'message', fn: (worker: Worker, message: unknown) => void): unknown; workers?: NodeJS.Dict<Worker> }): void {
  c.on('message', (from, m) => {
    if (!isSignal(m)) return;
    for (const w of Object.values(c.workers ?? {})) if (w && w !== from && w.isConnected()) w.send(m);
  });
}
