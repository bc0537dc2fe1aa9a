// Commit signals (docs/architecture.md §Database layer, docs/events.md §Delivery): a writer says
// "there is new work on `channel`" once its transaction committed, and every listener of that
// channel on the same database hears it: in this process at once, in other processes through
// the database's own means (PostgreSQL: NOTIFY to a LISTEN connection; SQLite: the cluster's IPC,
// the primary relaying to the other workers). A signal carries nothing and may be lost (a process
// that dies between its commit and its signal, a listening connection being replaced); listeners
// still look on their own at intervals, and a signal only makes them look sooner.
import type { Kysely } from 'kysely';
import { afterCommit } from './write.ts';
import type { Database, Db, Tx } from './types.ts';

/** One database handle's signals; each dialect makes its own (src/db/postgres/signals.ts, src/db/sqlite/signals.ts). */
export interface SignalHub {
  /** Tells this handle's listeners of `channel` now, and the other processes' soon. */
  send(channel: string): void;
  /** Calls `fn` on each signal of `channel`, from any process; returns the unsubscribe. */
  listen(channel: string, fn: () => void): () => void;
  close(): Promise<void>;
}

const hubs = new WeakMap<Kysely<Database>, SignalHub>();

export function registerSignals(kysely: Kysely<Database>, hub: SignalHub): void {
  hubs.set(kysely, hub);
}

/**
 * In a write that runs follow-ups (src/db/write.ts), signals `channel` once it committed, if `when()` (asked
 * then) is true; elsewhere nothing is sent (the listeners find the work when they next look).
 */
export function signalAfterCommit(tx: Tx, channel: string, when: () => boolean = () => true): void {
  afterCommit(tx, async (db) => {
    if (when()) hubs.get(db)?.send(channel);
  });
}

/** Calls `fn` after each commit signalled on `channel` by any process sharing the database; returns the unsubscribe. */
export function onSignal(db: Db, channel: string, fn: () => void): () => void {
  return hubs.get(db.kysely)?.listen(channel, fn) ?? (() => {});
}

/** The listeners of one handle, by channel. */
export class Listeners {
  readonly #by = new Map<string, Set<() => void>>();

  add(channel: string, fn: () => void): () => void {
    let set = this.#by.get(channel);
    if (!set) this.#by.set(channel, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.#by.get(channel) === set) this.#by.delete(channel);
    };
  }

  has(channel: string): boolean {
    return this.#by.has(channel);
  }

  channels(): string[] {
    return [...this.#by.keys()];
  }

  emit(channel: string): void {
    for (const fn of this.#by.get(channel) ?? []) fn();
  }
}
