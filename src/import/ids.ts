// What an import knows of its objects' externalIds, kept on disk and not in the JavaScript heap
// (docs/import.md §Memory): the externalIds its check has seen (to refuse a duplicate) and the
// server id registered for each (to resolve references and print the id map). Both grow with the
// file, so they live in a temporary SQLite database of their own, with a small page cache, on
// the main thread: lookups stay synchronous, as the kinds' `known` is. The database is one open
// transaction without a journal: it is never read by anyone else, and removed with its directory.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

/** Pages of the ids' database held in memory, in KiB: the rest stays in the file (the system's cache). */
export const IDS_CACHE_KIB = 4096;

export class ImportIds {
  readonly #dir: string;
  /** The database file (removed by close). */
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #see: StatementSync;
  readonly #put: StatementSync;
  readonly #get: StatementSync;
  #closed = false;

  private constructor(dir: string) {
    this.#dir = dir;
    this.path = join(dir, 'ids.db');
    this.#db = new DatabaseSync(this.path);
    this.#db.exec(
      `pragma journal_mode = off; pragma synchronous = off; pragma locking_mode = exclusive; pragma cache_size = -${IDS_CACHE_KIB};
       create table seen (name text not null, external_id text not null, primary key (name, external_id)) without rowid;
       create table ids (object text not null, external_id text not null, id text not null, primary key (object, external_id)) without rowid;
       begin`,
    );
    this.#see = this.#db.prepare('insert or ignore into seen (name, external_id) values (?, ?)');
    this.#put = this.#db.prepare('insert or replace into ids (object, external_id, id) values (?, ?, ?)');
    this.#get = this.#db.prepare('select id from ids where object = ? and external_id = ?');
    this.#get.setReturnArrays(true);
  }

  static async open(): Promise<ImportIds> {
    return new ImportIds(await mkdtemp(join(tmpdir(), 'rolodex-import-ids-')));
  }

  /** Notes `externalId` as seen under `name`; false when it was already. */
  see(name: string, externalId: string): boolean {
    return Number(this.#see.run(name, externalId).changes) === 1;
  }

  set(object: string, externalId: string, id: string): void {
    this.#put.run(object, externalId, id);
  }

  get(object: string, externalId: string): string | undefined {
    const row = this.#get.get(object, externalId) as unknown as [string] | undefined;
    return row?.[0];
  }

  /** The objects that have ids, in name order. */
  objects(): string[] {
    return (this.#db.prepare('select distinct object from ids order by object').all() as { object: string }[]).map((r) => r.object);
  }

  /** The ids of `object`, a row at a time, in externalId order. */
  *entries(object: string): Generator<[string, string]> {
    const rows = this.#db.prepare('select external_id, id from ids where object = ? order by external_id');
    rows.setReturnArrays(true);
    for (const row of rows.iterate(object) as Iterable<[string, string]>) yield row;
  }

  /** Every id as one object: object → externalId → id (an import held in memory: the demo, tests). */
  toRecord(): Record<string, Record<string, string>> {
    const out: Record<string, Record<string, string>> = {};
    for (const object of this.objects()) {
      const ids: Record<string, string> = (out[object] = {});
      for (const [externalId, id] of this.entries(object)) ids[externalId] = id;
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
    await rm(this.#dir, { recursive: true, force: true });
  }
}
