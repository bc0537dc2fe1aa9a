// The contract between the import runner and each kind of object it can load (docs/design.md
// §Import format). A kind checks an object's shape without the database, then, inside the one
// import transaction, upserts its rows by externalId (phase 1) and resolves its references (phase
// 2), so objects may reference each other in any order.
import type { Executor, Tx } from '../db/index.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import type { IdKind } from '../lib/ids.ts';
import { longerThan } from '../lib/chars.ts';
import { visible } from '../lib/json-numbers.ts';

/**
 * `s` as the report of a failed import shows it (docs/import.md §CSV, §Rules): one error a line,
 * and every character that prints nothing (a line break, a terminal's escape, U+2066) written as
 * `\n` or its code point, whichever error quotes it (a cell, an externalId, a header).
 */
const oneLine = visible;

/** An error tied to an input line (NDJSON), CSV row or array item (JSON). */
export class ImportError extends InputError {
  override name = 'ImportError';
  readonly line: number;
  readonly field: string;
  /** What is wrong, without the line and field. */
  readonly reason: string;
  constructor(line: number, field: string, message: string) {
    super(`line ${line}: ${oneLine(field)}: ${oneLine(message)}`, field);
    this.line = line;
    this.field = field;
    this.reason = oneLine(message);
  }
}

/** An item's reference to another object by externalId, and the field that holds it. */
export interface Reference {
  /** The object named, as `ImportContext.resolve` takes it: a kind's object or a custom type's slug. */
  object: string;
  externalId: string;
  field: string;
}

/**
 * What `ImportKind.references` reads: `db` is the database (nothing is written yet), `kept` as in
 * `ImportContext`. `items` is there only once every line is checked: the checked items of a kind.
 */
export interface ReferenceContext extends Ctx {
  kept<S>(key: symbol, make: () => S): S;
  items?(object: string): AsyncIterable<ImportItem<unknown>>;
}

export interface ImportItem<T> {
  line: number;
  externalId: string;
  value: T;
}

export interface ImportContext extends WriteCtx {
  /** The transaction of the chunk being written (the import's one transaction when atomic). */
  db: Tx;
  /**
   * Where `ImportKind.ahead` reads: the database, between a batched import's transactions, so that
   * its reads hold no lock a server's writes wait for; the import's transaction when atomic.
   */
  readonly reader: Executor;
  /** Server id of an object of this import or already in the workspace; throws ImportError naming
   *  the line and field when there is none. */
  resolve(object: string, externalId: string, at: { line: number; field: string }): Promise<string>;
  /** Server ids of several externalIds of one object, registered or in the workspace, in one lookup; those found nowhere are absent. */
  resolveAll(object: string, externalIds: Iterable<string>): Promise<Map<string, string>>;
  /** Records the server id of an imported object (for resolve and the id map). */
  register(object: string, externalId: string, id: string): void;
  /** The server id of an object this import has registered so far, without the database. */
  known(object: string, externalId: string): string | undefined;
  /** Every externalId the import holds under `name` (a kind's object, or `<object> <scope>`), in order. */
  externalIds(name: string): Iterable<string>;
  /**
   * What a kind keeps for the whole import, over every chunk and transaction (the record kinds'
   * definitions, bulk loads and early links): under `key`, made by `make` at its first use.
   */
  kept<S>(key: symbol, make: () => S): S;
  /** The id of a new object: the import's ids grow in the order they are drawn (`idSequence`). */
  newId(kind: IdKind): string;
  /**
   * Claims a value of a unique field (`group` names the type and field) for `line`, over the whole
   * import, keeping `note` with it: the line that claimed it first, or undefined when it is now
   * this line's.
   */
  claim(group: string, value: string, line: number, note?: string): number | undefined;
  /** Every value claimed so far, group by group. */
  claims(): Iterable<{ group: string; value: string; line: number; note: string }>;
  /** Whether a kind may drop and rebuild indexes around its rows: only when the import writes in one transaction (docs/import.md §Speed). */
  bulkLoad?: boolean;
  /**
   * Whether the import takes its listings' locks only just before COMMIT (docs/import.md §Sharing
   * the database): a kind then leaves for `underLocks` its writes to objects that a server's
   * writers change after taking a listing (an existing list's name and members), so that both
   * take their locks in one order.
   */
  readonly locksLate?: boolean;
  /** How many objects of a kind (`ImportKind.object`) this import holds over all of its chunks; with `scope`, of that scope of the kind (`ImportKind.scope`). */
  total?(object: string, scope?: string): number;
}

/**
 * One kind of importable object. `ctx.db` is the import's one transaction in upsert and link, the
 * database in prepare; `ctx.actor` is the operator acting on the workspace. Dependencies beyond
 * the ctx (the blob store of files) are bound when the kind is made (see src/cli/import-kinds.ts).
 */
export interface ImportKind<T = unknown> {
  object: string;
  /** Validates one object (its `object` and `externalId` already checked); throws InputError with the field as param. */
  check(raw: Record<string, unknown>): T;
  /**
   * For a kind whose objects are identified by what they are, not by an externalId (definitions):
   * the name a line without `externalId` takes, from its checked value. Without it, every line
   * needs an externalId.
   */
  nameOf?(value: T): string;
  /**
   * Work outside the transaction, such as copying file bytes; `undo` runs if the import fails
   * before the chunk's transaction committed, once no transaction of the import is open.
   */
  prepare?(ctx: Ctx, items: ImportItem<T>[]): Promise<{ undo(): Promise<void> }>;
  /** Server ids of existing objects of this kind, by externalId; `object` is the name resolved
   *  when the kind covers several (see `covers`). */
  lookup(ctx: Ctx, externalIds: string[], object?: string): Promise<Map<string, string>>;
  /** What `lookup` finds, as the error of a reference it does not find names it ("COMPLETED file"); the object's name when absent. */
  found?: string;
  /** For a kind whose objects come in several types (records of custom object types): the type
   *  of one object. ExternalIds are unique per kind and type. */
  scope?(value: T): string;
  /** Other object names this kind registers ids under and resolves (custom types' slugs). */
  covers?(object: string): boolean;
  /**
   * For a kind with scopes, once every line is checked and before the first write: which of
   * `scopes` (every scope the lines name) name nothing, e.g. no custom type of the workspace or of
   * the file. Each line of those is reported as `unknownScope` makes its error.
   */
  unknownScopes?(ctx: ReferenceContext, scopes: readonly string[]): Promise<ReadonlySet<string>>;
  unknownScope?(item: ImportItem<T>): ImportError;
  /**
   * The item's references to other objects by externalId, those its write resolves (docs/import.md
   * §Rules): the import finds the ones that name nothing, in the file or the workspace, before
   * its first write, and reports every line that has one. Null when the item's references cannot
   * be told before every line is checked (`ctx.items` absent): the kind is then asked again, for
   * every item, once they are. A reference the kind cannot tell even then is left out: its write
   * still refuses it.
   */
  references?(ctx: ReferenceContext, item: ImportItem<T>): Reference[] | null | Promise<Reference[] | null>;
  /** Whether upsert needs every item of the kind in one call (definitions order their own lines); else it gets them a chunk at a time. */
  whole?: boolean;
  /**
   * Runs before each chunk's upsert, outside the chunk's transaction when batched: reads that need
   * no lock (`ctx.reader`), such as the records' lookups of the externalIds that exist.
   */
  ahead?(ctx: ImportContext, items: ImportItem<T>[]): Promise<void>;
  upsert(ctx: ImportContext, items: ImportItem<T>[]): Promise<void>;
  /** Runs once after the last chunk of the kind's upserts, in that chunk's transaction: ends what its chunks began together (a bulk load). */
  finish?(ctx: ImportContext): Promise<void>;
  link?(ctx: ImportContext, items: ImportItem<T>[]): Promise<void>;
  /**
   * Runs once in an atomic import, just before COMMIT, once the listings' locks that the import
   * takes late are held (docs/import.md §Sharing the database): checks again, under them, what its
   * chunks checked without them (unique values), and writes what it left for then (`locksLate`).
   */
  underLocks?(ctx: ImportContext): Promise<void>;
}

/**
 * The upsert of phase 1, one loop for every kind: looks the items' externalIds up once, updates
 * the objects that exist, inserts the others under a new id, and registers every id. `find`
 * returns the existing objects by externalId: their id, or a row holding it.
 */
export async function upsertByExternalId<T, Old extends string | { id: string }>(
  ctx: ImportContext,
  items: ImportItem<T>[],
  spec: {
    object: string;
    idKind: IdKind;
    find(externalIds: string[]): Promise<Map<string, Old>>;
    update(item: ImportItem<T>, old: Old, id: string): Promise<void> | void;
    insert(item: ImportItem<T>, id: string): Promise<void> | void;
  },
): Promise<void> {
  const existing = await spec.find(items.map((i) => i.externalId));
  for (const item of items) {
    const old = existing.get(item.externalId);
    let id: string;
    if (old === undefined) {
      id = ctx.newId(spec.idKind);
      await spec.insert(item, id);
    } else {
      id = typeof old === 'string' ? old : old.id;
      await spec.update(item, old, id);
    }
    ctx.register(spec.object, item.externalId, id);
  }
}

/** The error of a reference at `field` of `line` that names nothing: no line of the import, nothing `kind` finds in the workspace. */
export function namesNothing(line: number, field: string, object: string, externalId: string, kind: ImportKind<any> | undefined): ImportError {
  return new ImportError(line, field, `no ${kind?.found ?? object} with externalId "${externalId}" in this import or the workspace`);
}

// Helpers for check() implementations.
/**
 * An externalId as every import line must carry one: a string of 1 to 255 characters. The CLI
 * commands that set one hold it to the same rule, so that an export always imports again.
 */
export function checkExternalId(v: unknown, param = 'externalId', opts: { named?: boolean } = {}): string {
  if (typeof v !== 'string' || v.length < 1 || longerThan(v, 255))
    throw new InputError(`${opts.named ? `${param} ` : ''}must be a string of 1 to 255 characters`, param);
  return v;
}

export function str(raw: Record<string, unknown>, field: string, opts: { required?: boolean; max?: number } = {}): string | null {
  const v = raw[field];
  if (v === undefined || v === null) {
    if (opts.required) throw new InputError('is required', field);
    return null;
  }
  if (typeof v !== 'string') throw new InputError('must be a string', field);
  if (opts.max !== undefined && longerThan(v, opts.max)) throw new InputError(`must be at most ${opts.max} characters`, field);
  return v;
}

export function onlyFields(raw: Record<string, unknown>, allowed: string[]): void {
  for (const k of Object.keys(raw)) {
    if (!allowed.includes(k) && k !== 'object' && k !== 'externalId') throw new InputError('is not a known field', k);
  }
}
