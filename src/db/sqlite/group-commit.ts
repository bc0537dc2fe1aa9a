// Group commit on SQLite (docs/performance.md §SQLite writes committed together). One connection
// writes, one transaction at a time (src/db/background.ts). A transaction that ends does not COMMIT
// at once: it leaves its writes in SQLite's open transaction and hands the connection on, and the
// transactions that start before the next turn of the event loop write in that same SQLite
// transaction, each behind a savepoint of its own. The group COMMITs once, at that turn (or at once
// when it reaches its limits, or when a statement outside any transaction comes): each member's
// commit resolves only then, so no caller is answered before its writes are durable, and the group
// pays one COMMIT (its WAL frames, its share of checkpoints) instead of one per transaction.
//
// The members run one after the other, each seeing the writes of those before it, as it would once
// those committed; a member that fails rolls back to its savepoint and leaves the others' writes
// alone (the first needs none: it fails alone, with ROLLBACK). If SQLite ends the transaction
// itself (an I/O error) or the COMMIT fails, every member not yet committed fails with it: none was
// answered.
import type { DatabaseSync } from 'node:sqlite';

const SAVEPOINT = 'rolodex_member';

/** A group COMMITs at once when it has this many members, or has been open this long. */
export const GROUP_LIMITS = { members: 64, ms: 10 };

const ENDED = 'SQLite ended the transaction of a group commit';

interface Open {
  since: number;
  members: PromiseWithResolvers<void>[];
  /** The member under way started the SQLite transaction, with no savepoint. */
  first: boolean;
}

export class SqliteGroupCommit {
  #open: Open | undefined;

  /** Whether a group holds writes not yet committed. */
  get open(): boolean {
    return this.#open !== undefined;
  }

  /** Starts a member: in the open group, or in a new SQLite transaction that `begin` opens. */
  async begin(raw: DatabaseSync, begin: () => Promise<void>): Promise<void> {
    if (this.#open && !raw.isTransaction) this.fail(new Error(ENDED));
    if (this.#open) {
      raw.exec(`SAVEPOINT ${SAVEPOINT}`);
      this.#open.first = false;
      return;
    }
    await begin();
    this.#open = { since: performance.now(), members: [], first: true };
  }

  /** Ends a member that succeeded; the promise settles when the group commits or fails. */
  end(raw: DatabaseSync): Promise<void> {
    const open = this.#open;
    if (!open || !raw.isTransaction) {
      const err = new Error(ENDED);
      this.fail(err);
      return Promise.reject(err);
    }
    if (!open.first) raw.exec(`RELEASE ${SAVEPOINT}`);
    const member = Promise.withResolvers<void>();
    open.members.push(member);
    return member.promise;
  }

  /** Ends a member that failed: its own writes are undone, the group's stay. */
  rollback(raw: DatabaseSync): void {
    const open = this.#open;
    if (!open) return;
    if (!raw.isTransaction) return this.fail(new Error(ENDED));
    if (open.first) {
      this.#open = undefined;
      raw.exec('ROLLBACK');
      return;
    }
    raw.exec(`ROLLBACK TO ${SAVEPOINT}`);
    raw.exec(`RELEASE ${SAVEPOINT}`);
  }

  /** Whether the open group has reached its limits. */
  get full(): boolean {
    const open = this.#open;
    return open !== undefined && (open.members.length >= GROUP_LIMITS.members || performance.now() - open.since >= GROUP_LIMITS.ms);
  }

  /** COMMITs the open group, if any, and settles its members. */
  commit(raw: DatabaseSync): void {
    const open = this.#open;
    if (!open) return;
    this.#open = undefined;
    try {
      raw.exec('COMMIT');
    } catch (err) {
      try {
        if (raw.isOpen && raw.isTransaction) raw.exec('ROLLBACK');
      } finally {
        for (const m of open.members) m.reject(err);
      }
      return;
    }
    for (const m of open.members) m.resolve();
  }

  /** Fails the open group's members, none of them committed (SQLite ended its transaction, or the connection is closing). */
  fail(err: Error): void {
    const open = this.#open;
    this.#open = undefined;
    for (const m of open?.members ?? []) m.reject(err);
  }
}
