// Group commit on PostgreSQL: transactions that reach COMMIT in the same turn of the event loop,
// having sent nothing yet, and made only of statements that insert new rows or take a partition's lock
// for inserts (markGroupable, src/db/pipeline.ts), go out as one transaction: one BEGIN, their
// statements one transaction after the other, one COMMIT. Concurrent creates of one workspace thus
// share the write to PostgreSQL, its wake-up, the commit and its WAL flush (docs/performance.md
// §Creates committed together).
//
// The group gives what its transactions would give one after the other: each inserts rows of its
// own, and a statement that reads (a ranked create's count of its leaf) sees the rows inserted
// before it, as it would after those transactions committed. Each statement keeps its own answer. If
// anything in the group fails, PostgreSQL rolls all of it back, and each transaction is sent again
// on its own, so one transaction's failure is never another's. Their statements take shared locks
// only (the partition's, and a foreign key's on the row it points to), besides their new rows, so
// joining them adds no wait of one transaction on another.
import { CompiledQuery } from 'kysely';
import { isGroupable } from '../pipeline.ts';

/** Sends BEGIN, `queued` and COMMIT in one write; fails if the transaction did not commit. */
export type CommitAll<C> = (on: C, queued: CompiledQuery[]) => Promise<void>;

interface Member<C> {
  on: C;
  queued: CompiledQuery[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

const BEGIN = 'begin';

/** True when a transaction whose statements are all `queued` (BEGIN first) may commit in a group. */
export function groupable(queued: readonly CompiledQuery[]): boolean {
  return queued.length > 1 && queued[0]!.sql === BEGIN && queued.every((q, i) => i === 0 || isGroupable(q));
}

/** The group commits of one pool. */
export class GroupCommit<C> {
  readonly #commitAll: CommitAll<C>;
  #pending: Member<C>[] = [];

  constructor(commitAll: CommitAll<C>) {
    this.#commitAll = commitAll;
  }

  /** Commits `queued` (BEGIN first, as `groupable` accepted it) with the others of this turn. */
  commit(on: C, queued: CompiledQuery[]): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#pending.push({ on, queued, resolve, reject }) === 1) setImmediate(() => void this.#flush());
    });
  }

  async #flush(): Promise<void> {
    const group = this.#pending;
    this.#pending = [];
    if (group.length > 1) {
      try {
        await this.#commitAll(group[0]!.on, [CompiledQuery.raw(BEGIN), ...group.flatMap((m) => m.queued.slice(1))]);
        for (const m of group) m.resolve();
        return;
      } catch {
        // Rolled back whole: each goes again on its own, below, and meets its own outcome.
      }
    }
    await Promise.all(
      group.map((m) =>
        this.#commitAll(m.on, m.queued).then(
          () => m.resolve(),
          (err: unknown) => m.reject(err),
        ),
      ),
    );
  }
}
