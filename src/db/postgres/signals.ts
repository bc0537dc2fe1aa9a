// Commit signals on PostgreSQL (src/db/signals.ts, docs/events.md §Delivery): NOTIFY and LISTEN.
// - A signal is a NOTIFY sent on the shared connection after the commit it follows, not in the
//   write's transaction: a NOTIFY in a transaction adds a statement to it (which keeps it out of a
//   group commit, src/db/postgres/group-commit.ts) and takes, at commit, a lock of the whole server
//   that every notifying commit waits on in turn. After commit, one NOTIFY per channel is in flight
//   at a time and the commits meanwhile share the next one, sent once it is answered, so each
//   commit is followed by a NOTIFY sent after it. A NOTIFY's transaction commits like a write (it
//   has a transaction id), and the reads pipelined behind it would wait for its WAL flush: it
//   commits with synchronous_commit off, since nothing is lost if it is. A process that dies
//   between its commit and its NOTIFY leaves the work to the listeners' polls.
// - A process that listens keeps one connection of its own (outside the pool) with a LISTEN per
//   channel. That connection is watched: when it closes, or does not answer a heartbeat in time,
//   it is dropped and opened again, waiting longer after each failure; every LISTEN that takes
//   wakes its channel's listeners once, for what was committed while no one listened.
// Channel names are derived from the schema, so deployments (and test runs) in other schemas of
// one database do not wake each other; a process ignores its own NOTIFYs, whose listeners it
// called already.
import { createHash, randomBytes } from 'node:crypto';
import { Listeners, type SignalHub } from '../signals.ts';
import { endClient } from './close.ts';
import { type Client, type Clients, runShared } from './lanes.ts';

const RETRY_MS = [100, 500, 1000, 2000, 5000];
const HEARTBEAT_MS = 30_000;
const ANSWER_MS = 5000;

/** Opens the listening connection: one connection, never closed for idleness or age. */
export type ListenClient = (notified: (name: string, payload: string) => void, closed: () => void) => Client;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (err: unknown) => (clearTimeout(timer), reject(err as Error)),
    );
  });
}

/** The PostgreSQL channel of `channel` for the tables of `schema` (undefined: the default one). */
export function listenName(schema: string | undefined, channel: string): string {
  return `rolodex_${createHash('sha256')
    .update(`${schema ?? ''}/${channel}`)
    .digest('hex')
    .slice(0, 32)}`;
}

export function postgresSignals(clients: Clients, schema: string | undefined, listenClient: ListenClient): SignalHub {
  const origin = randomBytes(8).toString('hex');
  const listeners = new Listeners();
  const channelOf = new Map<string, string>();
  const nameOf = (channel: string): string => {
    const name = listenName(schema, channel);
    channelOf.set(name, channel);
    return name;
  };
  /** Channels with a NOTIFY in flight; true when a commit since wants another. */
  const sending = new Map<string, boolean>();
  let conn: Client | null = null;
  /** The channels LISTENed on `conn`. */
  let heard = new Set<string>();
  let syncing = false;
  let failures = 0;
  let retry: NodeJS.Timeout | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  let closed = false;

  const notify = (channel: string): void => {
    if (sending.has(channel)) {
      sending.set(channel, true);
      return;
    }
    sending.set(channel, false);
    // One statement, its own transaction: one that failed leaves no transaction open on the shared connection.
    runShared(clients, { sql: `select set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, parameters: [nameOf(channel), origin] })
      .catch(() => {})
      .finally(() => {
        const again = sending.get(channel) === true;
        sending.delete(channel);
        if (again && !closed) notify(channel);
      });
  };

  const later = (ms: number): void => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      void sync();
    }, ms);
  };

  const drop = (on: Client): void => {
    if (conn !== on) return;
    conn = null;
    heard = new Set();
    on.end({ timeout: 0 }).catch(() => {});
    later(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]!);
  };

  const open = (): Client => {
    const c: Client = listenClient(
      (name, payload) => {
        const channel = channelOf.get(name);
        if (payload !== origin && channel !== undefined) listeners.emit(channel);
      },
      () => drop(c),
    );
    return c;
  };

  async function sync(): Promise<void> {
    if (closed || syncing) return;
    const missing = listeners.channels().filter((c) => !heard.has(c));
    if (missing.length === 0) return;
    syncing = true;
    const on = (conn ??= open());
    try {
      await within(on.unsafe(missing.map((c) => `listen "${nameOf(c)}"`).join('; ')), ANSWER_MS);
      if (conn !== on) return;
      for (const c of missing) heard.add(c);
      failures = 0;
      for (const c of missing) listeners.emit(c);
    } catch {
      drop(on);
    } finally {
      syncing = false;
    }
    // Channels that gained their first listener while this LISTEN was under way.
    if (conn === on && listeners.channels().some((c) => !heard.has(c))) later(0);
  }

  const beat = (): void => {
    const on = conn;
    if (closed || !on || syncing) return;
    within(on`select 1`.execute(), ANSWER_MS).catch(() => drop(on));
  };

  return {
    send(channel) {
      listeners.emit(channel);
      if (!closed) notify(channel);
    },
    listen(channel, fn) {
      const off = listeners.add(channel, fn);
      heartbeat ??= setInterval(beat, HEARTBEAT_MS);
      void sync();
      return off;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      if (heartbeat) clearInterval(heartbeat);
      const on = conn;
      conn = null;
      if (on) await endClient(on);
    },
  };
}
