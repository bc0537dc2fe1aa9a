// What an import knows of its objects' externalIds, kept on disk and not in the JavaScript heap
// (docs/import.md §Memory): the externalIds its check has seen (to refuse a duplicate) and the
// server id registered for each (to resolve references and print the id map), and the references
// to externalIds that no line holds, checked before the first write. They grow with the file, so
// they live in a scratch store of the database layer (a temporary SQLite database of its own, with
// a small page cache): lookups stay synchronous, as the kinds' `known` is.
import { ScratchStore, type ScratchMap } from '../db/index.ts';

/** Pages of the ids' store held in memory, in KiB: the rest stays in the file (the system's cache). */
export const IDS_CACHE_KIB = 4096;

export class ImportIds {
  readonly #store: ScratchStore;
  readonly #seen: ScratchMap;
  readonly #ids: ScratchMap;
  readonly #claimed: ScratchMap;
  readonly #referenced: ScratchMap;
  readonly #missing: ScratchMap;

  private constructor(store: ScratchStore) {
    this.#store = store;
    this.#seen = store.table('seen');
    this.#ids = store.table('ids');
    this.#claimed = store.table('claimed');
    this.#referenced = store.table('referenced');
    this.#missing = store.table('missing');
  }

  static async open(): Promise<ImportIds> {
    return new ImportIds(
      await ScratchStore.open({ tables: ['seen', 'ids', 'claimed', 'referenced', 'missing'], cacheKiB: IDS_CACHE_KIB, prefix: 'rolodex-import-ids-' }),
    );
  }

  /**
   * Claims `value` of a unique field (`group`) for `line`, keeping `note` with it: the line that
   * claimed it first, or undefined when it is now this line's.
   */
  claim(group: string, value: string, line: number, note = ''): number | undefined {
    if (this.#claimed.add(group, value, `${line}\t${note}`)) return undefined;
    return Number.parseInt(this.#claimed.get(group, value)!, 10);
  }

  /** Every claim, group by group: its group, value, line and note. */
  *claims(): Generator<{ group: string; value: string; line: number; note: string }> {
    for (const group of this.#claimed.groups())
      for (const [value, kept] of this.#claimed.entries(group)) {
        const tab = kept!.indexOf('\t');
        yield { group, value, line: Number.parseInt(kept!, 10), note: kept!.slice(tab + 1) };
      }
  }

  /** The store's file (removed by close). */
  get path(): string {
    return this.#store.path;
  }

  /** The externalIds seen under `name`, in order. */
  *seenOf(name: string): Generator<string> {
    for (const [externalId] of this.#seen.entries(name)) yield externalId;
  }

  /** Notes `externalId` as seen under `name`; false when it was already. */
  see(name: string, externalId: string): boolean {
    return this.#seen.add(name, externalId);
  }

  /** Whether `externalId` was seen under `name`. */
  saw(name: string, externalId: string): boolean {
    return this.#seen.get(name, externalId) !== undefined;
  }

  /**
   * Notes a reference to `externalId` of `object` (`Reference.object`) that no line seen so far
   * holds (src/import/references.ts); each once.
   */
  refer(object: string, externalId: string): void {
    this.#referenced.add(object, externalId);
  }

  /** The objects referenced (`refer`), in name order. */
  referencedObjects(): string[] {
    return this.#referenced.groups();
  }

  /** The externalIds of `object` referenced, in order. */
  *referenced(object: string): Generator<string> {
    for (const [externalId] of this.#referenced.entries(object)) yield externalId;
  }

  /** Notes that `externalId` of `object` is neither in the file nor in the workspace. */
  miss(object: string, externalId: string): void {
    this.#missing.add(object, externalId);
  }

  /** Whether `externalId` of `object` was found missing (`miss`). */
  missing(object: string, externalId: string): boolean {
    return this.#missing.get(object, externalId) !== undefined;
  }

  set(object: string, externalId: string, id: string): void {
    this.#ids.put(object, externalId, id);
  }

  get(object: string, externalId: string): string | undefined {
    return this.#ids.get(object, externalId) ?? undefined;
  }

  /** The objects that have ids, in name order. */
  objects(): string[] {
    return this.#ids.groups();
  }

  /** The ids of `object`, a row at a time, in externalId order. */
  *entries(object: string): Generator<[string, string]> {
    for (const [externalId, id] of this.#ids.entries(object)) yield [externalId, id!];
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

  close(): Promise<void> {
    return this.#store.close();
  }
}
