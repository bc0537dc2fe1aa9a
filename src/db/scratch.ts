// A scratch store: a temporary SQLite database of its own, for what a command holds that grows
// with its input (an import's externalIds, docs/import.md §Memory), kept on disk and not in the
// JavaScript heap. Its calls are synchronous: a lookup is a function call, not a turn of the event
// loop. It is one open transaction without a journal, in exclusive locking: nothing else ever
// reads it, and it is removed with its directory when closed. It is no part of the application's
// database, whichever that is.
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { tempDir, type TempDir } from '../lib/temp-dir.ts';

/** A map of (group, key) to a text value, in one table of the store. */
export interface ScratchMap {
  /** Adds `key` under `group` unless it is there; false when it was (its value is then kept). */
  add(group: string, key: string, value?: string): boolean;
  /** Sets the value of `key` under `group`, replacing any. */
  put(group: string, key: string, value: string): void;
  /** The value of `key` under `group`: undefined when absent, null when added without one. */
  get(group: string, key: string): string | null | undefined;
  /** The groups that hold keys, in name order. */
  groups(): string[];
  /** The keys of `group` with their values, a row at a time, in key order. */
  entries(group: string): Generator<[string, string | null]>;
}

class Table implements ScratchMap {
  readonly #db: DatabaseSync;
  readonly #name: string;
  readonly #add: StatementSync;
  readonly #put: StatementSync;
  readonly #get: StatementSync;

  constructor(db: DatabaseSync, name: string) {
    this.#db = db;
    this.#name = name;
    this.#add = db.prepare(`insert or ignore into "${name}" (grp, key, value) values (?, ?, ?)`);
    this.#put = db.prepare(`insert or replace into "${name}" (grp, key, value) values (?, ?, ?)`);
    this.#get = db.prepare(`select value from "${name}" where grp = ? and key = ?`);
    this.#get.setReturnArrays(true);
  }

  add(group: string, key: string, value?: string): boolean {
    return Number(this.#add.run(group, key, value ?? null).changes) === 1;
  }

  put(group: string, key: string, value: string): void {
    this.#put.run(group, key, value);
  }

  get(group: string, key: string): string | null | undefined {
    const row = this.#get.get(group, key) as unknown as [string | null] | undefined;
    return row?.[0];
  }

  groups(): string[] {
    return (this.#db.prepare(`select distinct grp from "${this.#name}" order by grp`).all() as { grp: string }[]).map((r) => r.grp);
  }

  *entries(group: string): Generator<[string, string | null]> {
    const rows = this.#db.prepare(`select key, value from "${this.#name}" where grp = ? order by key`);
    rows.setReturnArrays(true);
    for (const row of rows.iterate(group) as Iterable<[string, string | null]>) yield row;
  }
}

export interface ScratchOptions {
  /** The store's maps, by name (letters, digits and underscores). */
  tables: readonly string[];
  /** Pages held in memory, in KiB: the rest stays in the file, in the system's cache. */
  cacheKiB: number;
  /** The start of its directory's name under the system's temporary directory. */
  prefix: string;
}

export class ScratchStore {
  readonly #dir: TempDir;
  /** The database file (removed by close). */
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #tables = new Map<string, Table>();
  #closed = false;

  private constructor(dir: TempDir, opts: ScratchOptions) {
    this.#dir = dir;
    this.path = join(dir.dir, 'scratch.db');
    this.#db = new DatabaseSync(this.path);
    this.#db.exec(`pragma journal_mode = off; pragma synchronous = off; pragma locking_mode = exclusive; pragma cache_size = -${Math.trunc(opts.cacheKiB)};`);
    for (const name of opts.tables) {
      this.#db.exec(`create table "${name}" (grp text not null, key text not null, value text, primary key (grp, key)) without rowid`);
    }
    this.#db.exec('begin');
    for (const name of opts.tables) this.#tables.set(name, new Table(this.#db, name));
  }

  static async open(opts: ScratchOptions): Promise<ScratchStore> {
    for (const name of opts.tables) if (!/^\w+$/.test(name)) throw new Error(`a scratch table's name is letters, digits and underscores: ${name}`);
    // Its directory goes also when a signal stops the process (src/lib/temp-dir.ts).
    const dir = await tempDir(opts.prefix);
    try {
      return new ScratchStore(dir, opts);
    } catch (err) {
      await dir.remove();
      throw err;
    }
  }

  /** The map named `name`, one of those it was opened with. */
  table(name: string): ScratchMap {
    const table = this.#tables.get(name);
    if (!table) throw new Error(`no scratch table ${name}`);
    return table;
  }

  /** Closes the database and removes its directory; once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
    await this.#dir.remove();
  }
}
