// Phase 2 of the record kinds of `rolodex import` (docs/import.md): their relationships, resolved
// by externalId once every kind has its ids, and for a bulk load written early, batch by batch,
// where every target is already known.
import { definitionsVersion, holdDefinitions } from '../definitions/repository.ts';
import { loadDefinitions, type RelationshipDef, type TypeDefinitions } from '../definitions/service.ts';
import { ImportError, type ImportContext, type ImportItem } from '../import/kind.ts';
import type { BulkLoad } from './index/repository.ts';
import { requireDefinitions } from './resource.ts';
import * as repo from './repository.ts';
import * as importRepo from './import-repository.ts';

export interface RecordInput {
  fields: Record<string, { value: unknown; valueType: string | undefined }>;
  /**
   * Values of the type's archived fields, kept hidden (docs/import.md §Export); undefined when the
   * line has no `archivedFields` (a CSV row never has), and an updated record keeps its own.
   */
  archivedFields?: Record<string, { value: unknown; valueType: string | undefined }>;
  /** relationship key → externalIds of the targets */
  relationships: Record<string, { objectType: string | undefined; values: string[] }>;
}

/** What the records' upserts of one import leave to their links. */
export interface ImportState {
  /** The definitions of each type at `defsAt.version`, for its upserts and links (`definitionsOf`). */
  defs: Map<string, TypeDefinitions>;
  /** The transaction that last read the workspace's definitions version, and the version it read. */
  defsAt: { db: object; version: number } | undefined;
  /** Types this import bulk-loaded: every one of their records is new, so none has links to replace. */
  allNew: Set<string>;
  /** Lines of the items whose links went out with their batch (linkEarly). */
  linked: LineSet;
  /** Per type, decided at its first chunk: the bulk load spanning its chunks and the kind that ends it, or null (no bulk load). */
  loads: Map<string, { kind: string; load: BulkLoad } | null>;
  /** Types whose existing records were looked up, all at their first chunk. */
  lookedUp: Set<string>;
  /** Upserts whose ids are still to be checked (`writtenAsMeant`, src/records/import.ts). */
  unchecked: { kind: string; written: importRepo.Written; meant: { id: string; externalId: string; line: number }[] }[];
}

const STATE = Symbol('records.import');

/**
 * A set of input lines as one bit a line: an import of a million records marks most of them
 * (linkEarly), and a Set of numbers would hold some 30 bytes of heap for each (docs/import.md §Memory).
 */
export class LineSet {
  #bits = new Uint8Array(1024);

  add(line: number): void {
    if (line >> 3 >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(this.#bits.length * 2, (line >> 3) + 1));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    this.#bits[line >> 3]! |= 1 << (line & 7);
  }

  has(line: number): boolean {
    return line >> 3 < this.#bits.length && (this.#bits[line >> 3]! & (1 << (line & 7))) !== 0;
  }
}

/**
 * The definitions of `objectType` for this import's records, as they are in the transaction being
 * written (docs/import.md §Sharing the database, `batched`): each transaction reads the
 * workspace's definitions version once, and the definitions built under another version are built
 * again. One transaction (`atomic`) reads it once, at its first chunk of records, before the
 * writer thread has queued their statements; the definition kind has written all of its lines by
 * then (src/cli/import-kinds.ts). A batched import's chunks each read it, so a definition an
 * operator changed between two chunks holds for the later ones, as for a server's next request.
 * The version is read holding the definitions (`holdDefinitions`) until the transaction commits:
 * an `unarchive` cannot find the records it writes before they commit, so it waits for them, and
 * they are written with the definitions it committed or it indexes them after
 * (docs/records.md §Correcting definitions).
 */
export async function definitionsOf(ctx: ImportContext, objectType: string): Promise<TypeDefinitions | null> {
  const state = stateOf(ctx);
  let at = state.defsAt;
  if (at?.db !== ctx.db) {
    await holdDefinitions(ctx.db, ctx.actor.workspaceId);
    const version = await definitionsVersion(ctx.db, ctx.actor.workspaceId);
    if (at !== undefined && at.version !== version) state.defs.clear();
    state.defsAt = at = { db: ctx.db, version };
  }
  const known = state.defs.get(objectType);
  if (known) return known;
  const defs = await loadDefinitions(ctx, { objectType, version: at.version });
  if (defs) state.defs.set(objectType, defs);
  return defs;
}

/** The record kinds' state in this import, kept on its context. */
export function stateOf(ctx: ImportContext): ImportState {
  return ctx.kept<ImportState>(STATE, () => ({
    defs: new Map(),
    defsAt: undefined,
    allNew: new Set(),
    linked: new LineSet(),
    loads: new Map(),
    lookedUp: new Set(),
    unchecked: [],
  }));
}

/** Relationship `name` of an item of `kind`, checked: stored on the type, of the type named, within its cardinality. */
function linkDef(kind: string, defs: TypeDefinitions, item: ImportItem<RecordInput>, name: string): RelationshipDef {
  const { objectType, values } = item.value.relationships[name] as RecordInput['relationships'][string];
  const at = `relationships.${name}`;
  const def = defs.relationships.get(name);
  if (!def) throw new ImportError(item.line, at, `is not a relationship of ${kind}; operators define custom relationships first`);
  if (def.storage.kind !== 'own') throw new ImportError(item.line, at, `is not stored on ${kind}: import it from the other end`);
  if (objectType !== undefined && objectType !== def.objectType) throw new ImportError(item.line, `${at}.objectType`, `must be "${def.objectType}"`);
  if (def.cardinality === 'has_one' && values.length > 1) throw new ImportError(item.line, `${at}.values`, 'holds at most one externalId (has_one)');
  return def;
}

/** Members are the workspace's users: their externalIds are those of the user kind. */
export const importObject = (def: { objectType: string }) => (def.objectType === 'member' ? 'user' : def.objectType);

/**
 * The links of a bulk load's batch whose targets this import has already registered, sent with the
 * batch: while the main thread builds the next batch the writer thread has time to spare, and at
 * the end, where it builds the indexes, it has none (docs/import.md §Speed). An item with a target
 * not known yet (a later kind, a later batch, or a record already in the workspace) or a link its
 * checks refuse is left whole to `link`, which resolves or reports it as it always has.
 */
export async function linkEarly(ctx: ImportContext, kind: string, defs: TypeDefinitions, batch: ImportItem<RecordInput>[]): Promise<void> {
  const { linked } = stateOf(ctx);
  const rows: repo.RelationshipRow[] = [];
  items: for (const item of batch) {
    const source = ctx.known(kind, item.externalId) as string;
    const own: repo.RelationshipRow[] = [];
    for (const name of Object.keys(item.value.relationships)) {
      let def: RelationshipDef;
      try {
        def = linkDef(kind, defs, item, name);
      } catch {
        continue items;
      }
      const externalIds = (item.value.relationships[name] as RecordInput['relationships'][string]).values;
      for (let i = 0; i < externalIds.length; i++) {
        const target = ctx.known(importObject(def), externalIds[i] as string);
        if (target === undefined) continue items;
        own.push({ source_id: source, name, object_type: def.objectType, target_id: target, position: i });
      }
    }
    for (const r of own) rows.push(r);
    linked.add(item.line);
  }
  await repo.replaceRelationships(ctx.db, [], rows);
}

/** The error of a link that names nothing: no record of the target's type with that externalId. */
function nothing(item: ImportItem<RecordInput>, field: string, object: string, externalId: string): ImportError {
  return new ImportError(item.line, field, `no ${object} with externalId "${externalId}" in this import or the workspace`);
}

export async function link(kind: string, ctx: ImportContext, items: ImportItem<RecordInput>[]): Promise<void> {
  const state = stateOf(ctx);
  const defs = (await definitionsOf(ctx, kind)) ?? (await requireDefinitions(ctx, kind));
  // The items' relationships checked in order up to the first refused; every externalId they name
  // is then resolved with one lookup per object, not one per value (docs/import.md §Speed).
  const todo: { item: ImportItem<RecordInput>; defs: [string, RelationshipDef][] }[] = [];
  let refused: ImportError | undefined;
  const wanted = new Map<string, Set<string>>([[kind, new Set()]]);
  for (const item of items) {
    if (state.linked.has(item.line)) continue;
    const named: [string, RelationshipDef][] = [];
    try {
      for (const name of Object.keys(item.value.relationships)) named.push([name, linkDef(kind, defs, item, name)]);
    } catch (err) {
      refused = err as ImportError;
      break;
    }
    todo.push({ item, defs: named });
    (wanted.get(kind) as Set<string>).add(item.externalId);
    for (const [name, def] of named) {
      const object = importObject(def);
      let set = wanted.get(object);
      if (set === undefined) wanted.set(object, (set = new Set()));
      for (const ext of (item.value.relationships[name] as RecordInput['relationships'][string]).values) set.add(ext);
    }
  }
  const ids = new Map<string, Map<string, string>>();
  for (const [object, externalIds] of wanted) ids.set(object, await ctx.resolveAll(object, externalIds));
  const rows: repo.RelationshipRow[] = [];
  // A line's relationships replace the record's, but for its links to files when it names none.
  const [sources, keepingFiles]: [string[], string[]] = [[], []];
  for (const { item, defs: named } of todo) {
    const source = ids.get(kind)?.get(item.externalId);
    if (source === undefined) throw nothing(item, 'externalId', kind, item.externalId);
    (named.some(([, def]) => def.objectType === 'file') ? sources : keepingFiles).push(source);
    for (const [name, def] of named) {
      const object = importObject(def);
      const externalIds = (item.value.relationships[name] as RecordInput['relationships'][string]).values;
      for (let i = 0; i < externalIds.length; i++) {
        const target = ids.get(object)?.get(externalIds[i] as string);
        if (target === undefined) throw nothing(item, `relationships.${name}.values[${i}]`, object, externalIds[i] as string);
        rows.push({ source_id: source, name, object_type: def.objectType, target_id: target, position: i });
      }
    }
  }
  if (refused) throw refused;
  if (!state.allNew.has(kind)) await importRepo.unlinkKeepingFiles(ctx.db, keepingFiles);
  await repo.replaceRelationships(ctx.db, state.allNew.has(kind) ? [] : sources, rows);
}
