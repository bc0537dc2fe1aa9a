// The references of an import's lines to other objects by externalId (docs/import.md §Rules): one
// that names nothing, neither a line of the file nor an object of the workspace, is found before
// the first write, and every line that holds one is reported, so that an import that would fail
// at it writes nothing, batched too (docs/import.md §Sharing the database). Nothing of it is held
// in the JavaScript heap (docs/import.md §Memory): the check notes each referenced externalId that
// no line seen so far holds in the import's id store, and once every line is checked, those no
// line holds are looked up in the workspace, a few hundred a statement, one kind after the other.
// Only when some are found nowhere are the spilled lines read again, to name the lines.
import type { ImportIds } from './ids.ts';
import { ImportError, type ImportItem, namesNothing, type ImportKind, type Reference, type ReferenceContext } from './kind.ts';
import type { Spill } from './spill.ts';

/** ExternalIds looked up in the workspace a statement. */
const LOOKUP_BATCH = 500;

export interface ReferenceScope {
  store: ImportIds;
  /** The kind that resolves `object` (its `lookup`), as `ImportContext.resolve` finds it; undefined when none does. */
  kindOf: (object: string) => ImportKind<any> | undefined;
  /** The name the store sees `object`'s externalIds under (`record <slug>` for a custom type). */
  nameOf: (object: string) => string;
}

/** The spilled items of `kind`, checked again, in file order. */
async function* itemsOf(kind: ImportKind<any>, spill: Spill): AsyncGenerator<ImportItem<unknown>> {
  for await (const { line, raw } of spill.read(kind.object)) yield { line, externalId: raw.externalId as string, value: kind.check(raw) };
}

/**
 * The lines that name nothing, in line order: the first `max` of them, and how many more. Memory
 * holds the reported ones only.
 */
class Reported {
  readonly errors: ImportError[] = [];
  more = 0;
  readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  add(error: ImportError): void {
    const last = this.errors.at(-1);
    if (this.errors.length >= this.max) {
      this.more++;
      if (last === undefined || error.line >= last.line) return;
      this.errors.pop();
    }
    let at = this.errors.length;
    while (at > 0 && (this.errors[at - 1] as ImportError).line > error.line) at--;
    this.errors.splice(at, 0, error);
  }
}

export class References {
  readonly #scope: ReferenceScope;
  readonly #ctx: ReferenceContext;
  /** Kinds whose references could not be told during the check (`ImportKind.references` gave null). */
  readonly #later = new Set<ImportKind<any>>();

  constructor(scope: ReferenceScope, ctx: ReferenceContext) {
    this.#scope = scope;
    this.#ctx = ctx;
  }

  /** During the check, for each good line: notes its references that no line seen so far holds. */
  async note(kind: ImportKind<any>, item: ImportItem<unknown>): Promise<void> {
    if (!kind.references || this.#later.has(kind)) return;
    const refs = await kind.references(this.#ctx, item);
    if (refs === null) this.#later.add(kind);
    else this.#refer(refs);
  }

  #refer(refs: Reference[]): void {
    const { store, nameOf } = this.#scope;
    for (const r of refs) if (!store.saw(nameOf(r.object), r.externalId)) store.refer(r.object, r.externalId);
  }

  /**
   * Once every line is checked and spilled: the lines holding a reference that names nothing, the
   * first `max` in line order, and how many more; none when every reference names an object.
   */
  async check(kinds: ImportKind<any>[], spill: Spill, max: number): Promise<{ errors: ImportError[]; more: number }> {
    const { store, kindOf, nameOf } = this.#scope;
    const ctx = this.#withItems(kinds, spill);
    for (const kind of this.#later) for await (const item of itemsOf(kind, spill)) this.#refer((await kind.references!(ctx, item)) ?? []);

    let missing = 0;
    for (const object of store.referencedObjects()) {
      const kind = kindOf(object);
      const name = nameOf(object);
      let batch: string[] = [];
      const lookUp = async () => {
        const found = kind ? await kind.lookup(this.#ctx, batch, object) : new Map<string, string>();
        for (const externalId of batch) {
          if (found.has(externalId)) continue;
          store.miss(object, externalId);
          missing++;
        }
        batch = [];
      };
      for (const externalId of store.referenced(object)) {
        if (store.saw(name, externalId)) continue;
        batch.push(externalId);
        if (batch.length >= LOOKUP_BATCH) await lookUp();
      }
      if (batch.length > 0) await lookUp();
    }
    const reported = new Reported(max);
    if (missing === 0) return reported;

    for (const kind of kinds) {
      if (!kind.references) continue;
      for await (const item of itemsOf(kind, spill)) {
        const refs = (await kind.references(ctx, item)) ?? [];
        const bad = refs.find((r) => store.missing(r.object, r.externalId) && !store.saw(nameOf(r.object), r.externalId));
        if (bad) reported.add(namesNothing(item.line, bad.field, bad.object, bad.externalId, this.#scope.kindOf(bad.object)));
      }
    }
    return reported;
  }

  /**
   * Once every line is checked and spilled: the lines whose scope names nothing
   * (`ImportKind.unknownScopes`; `scoped` counts the lines of each `<kind> <scope>`), the first
   * `max` in line order. The spilled lines are read again only when some scope names nothing.
   */
  async scopes(kinds: ImportKind<any>[], scoped: ReadonlyMap<string, number>, spill: Spill, max: number): Promise<{ errors: ImportError[]; more: number }> {
    const reported = new Reported(max);
    const ctx = this.#withItems(kinds, spill);
    for (const kind of kinds) {
      if (!kind.unknownScopes || !kind.unknownScope || !kind.scope) continue;
      const prefix = `${kind.object} `;
      const named = [...scoped.keys()].filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
      const unknown = named.length === 0 ? new Set<string>() : await kind.unknownScopes(ctx, named);
      if (unknown.size === 0) continue;
      for await (const item of itemsOf(kind, spill)) if (unknown.has(kind.scope(item.value))) reported.add(kind.unknownScope(item));
    }
    return reported;
  }

  #withItems(kinds: ImportKind<any>[], spill: Spill): ReferenceContext {
    return {
      ...this.#ctx,
      items: (object) => {
        const kind = kinds.find((k) => k.object === object);
        return kind ? itemsOf(kind, spill) : (async function* () {})();
      },
    };
  }
}
