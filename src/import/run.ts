// Runs one import (docs/import.md): reads the source once to check every object (every bad one is
// reported, up to MAX_REPORTED), keeping each checked line on disk by kind, then finds the lines
// that reference an externalId found nowhere (src/import/references.ts), then writes kind by kind
// in dependency order, a chunk at a time, so that memory holds one chunk and not the file.
// `atomic` writes everything in one transaction; `batched` commits each chunk, so that a server
// sharing the database waits for one chunk at most (docs/import.md §Sharing the database).
import type { Ctx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { lockLate, planWithValues, replanOthers, restartLongLog, settled, takeLateLocks, type Tx, write } from '../db/index.ts';
import { idSequence } from '../lib/ids.ts';
import { unstorableText } from '../lib/unstorable.ts';
import { checkExternalId, ImportError, type ImportContext, type ImportItem, type ImportKind, namesNothing } from './kind.ts';
import { ImportIds } from './ids.ts';
import { References } from './references.ts';
import { type ImportSource, textSource } from './source.ts';
import { Spill } from './spill.ts';

export interface ImportResult {
  counts: Record<string, number>;
  /** object → externalId → server id; empty when the caller gave its own store (`ImportInput.ids`), which holds them. */
  ids: Record<string, Record<string, string>>;
  /** Seconds each step took, in order (docs/import.md §Rules). */
  phases: Record<string, number>;
}

export type CommitMode = 'atomic' | 'batched';

export interface ImportInput {
  /** The kinds this import may hold (src/cli/import-kinds.ts lists them all). */
  kinds: ImportKind<any>[];
  /** The objects; `text` (NDJSON or a JSON array in memory) is the short form. */
  source?: ImportSource;
  text?: string;
  /** One transaction (the default), or a transaction per chunk (docs/import.md §Sharing the database). */
  commit?: CommitMode;
  onProgress?: (phase: string, done: number, total: number) => void;
  /**
   * Where the import keeps its externalIds and ids (docs/import.md §Memory), when the caller reads
   * them afterwards: it stays open, and the result's `ids` is empty. Without it the import uses
   * a store of its own and returns every id in `ids`.
   */
  ids?: ImportIds;
}

/**
 * Objects an atomic import writes (each counted once for its rows and once for its links) before
 * other sessions plan again for the grown tables (`replanOthers`); then each time they double
 * (docs/import.md §Sharing the database).
 */
export const GROWN = { first: 10_000 };

/** Objects written per call of a kind: a transaction of their own when batched (the first chunk's size; see Pace). Tests make them smaller. */
export const IMPORT_CHUNK: Record<CommitMode, number> = { atomic: 1000, batched: 20 };
/**
 * A batched import's chunks (docs/import.md §Sharing the database): each holds the write lock for
 * about `holdMs`, whatever the machine's speed and the objects' size, so that a server's write
 * waits for one short chunk; `pauseMs` is how long the lock is then left free for it.
 */
export const BATCHED = { holdMs: 40, pauseMs: 5, min: 10, max: 2000, grow: 1.25 };
/** Bad objects reported by name; the rest are counted. */
export const MAX_REPORTED = 100;

/** Seconds since `start` (a `performance.now()`), to the millisecond: the unit of a summary's `phases`. */
export function secondsSince(start: number): number {
  return Math.round(performance.now() - start) / 1000;
}

export class ImportFailed extends Error {
  override name = 'ImportFailed';
  readonly errors: ImportError[];
  /** Bad objects beyond the ones reported. */
  readonly more: number;
  /** Whether chunks of a batched import were committed before the error. */
  committed = false;
  constructor(errors: ImportError[], more = 0) {
    super(errors.map((e) => e.message).join('\n') + (more > 0 ? `\n… and ${more} more bad objects` : ''));
    this.errors = errors;
    this.more = more;
  }
}

type Raw = Record<string, unknown>;

/** Checks one object's envelope and shape; returns its kind and checked value, or throws InputError. */
function checkObject(byObject: Map<string, ImportKind<any>>, value: unknown): { kind: ImportKind<any>; raw: Raw; checked: unknown; name: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('each entry must be a JSON object', '(object)');
  const raw = value as Raw;
  // A string a JSON escape gave a NUL or half of a surrogate pair would be stored changed (or fail
  // the write on PostgreSQL): refused with its place, as the API refuses such a body.
  const bad = unstorableText(raw);
  if (bad !== null) throw new InputError(bad.reason, bad.path);
  // A name no kind has may be a custom object type's slug, which the records' kind covers.
  const kind =
    byObject.get(raw.object as string) ?? (typeof raw.object === 'string' ? [...byObject.values()].find((k) => k.covers?.(raw.object as string)) : undefined);
  if (!kind) throw new InputError(`must be one of ${[...byObject.keys()].join(', ')}, or the slug of a custom object type`, 'object');
  const unnamed = raw.externalId === undefined && kind.nameOf !== undefined;
  if (!unnamed) checkExternalId(raw.externalId);
  const checked: unknown = kind.check(raw);
  // The spilled line carries the name, so the write and the output's `ids` see it as given.
  if (unnamed) raw.externalId = kind.nameOf!(checked);
  const scope = kind.scope?.(checked);
  return { kind, raw, checked, name: scope === undefined ? kind.object : `${kind.object} ${scope}` };
}

/** The error with its field named as the source names it (a CSV file's column), when it does. */
function placed(source: ImportSource, error: ImportError): ImportError {
  const column = source.column?.(error.field);
  return column === undefined || column === error.field ? error : new ImportError(error.line, column, error.reason);
}

/**
 * Pass 1: every object checked, the good ones spilled by kind and their references noted; throws
 * ImportFailed listing the bad ones. Returns the count of each kind's objects, and of each scope of
 * a kind that has scopes (`record project`).
 */
async function checkAll(
  byObject: Map<string, ImportKind<any>>,
  source: ImportSource,
  spill: Spill,
  ids: ImportIds,
  references: References,
): Promise<{ counts: Map<string, number>; scoped: Map<string, number> }> {
  const counts = new Map<string, number>();
  const scoped = new Map<string, number>();
  const errors: ImportError[] = [];
  let more = 0;
  const fail = (e: ImportError) => (errors.length < MAX_REPORTED ? errors.push(e) : more++);
  for await (const { line, value, error } of source.objects()) {
    if (error) {
      fail(error);
      continue;
    }
    try {
      const { kind, raw, checked, name } = checkObject(byObject, value);
      const externalId = raw.externalId as string;
      if (!ids.see(name, externalId)) throw new InputError(`"${externalId}" appears twice for ${name}`, 'externalId');
      counts.set(kind.object, (counts.get(kind.object) ?? 0) + 1);
      if (name !== kind.object) scoped.set(name, (scoped.get(name) ?? 0) + 1);
      await spill.add(kind.object, line, raw);
      if (errors.length === 0) await references.note(kind, { line, externalId, value: checked });
    } catch (err) {
      if (!(err instanceof InputError) || err instanceof ImportError) throw err;
      fail(placed(source, new ImportError(line, err.param ?? '(object)', err.message)));
    }
  }
  await spill.finish();
  // The types the lines name are known only once every line is read (a definition line may come
  // last): a line naming none is reported with the others.
  const unscoped = await references.scopes([...new Set(byObject.values())], scoped, spill, MAX_REPORTED);
  const all = [...errors, ...unscoped.errors.map((e) => placed(source, e))].sort((a, b) => a.line - b.line);
  more += unscoped.more + Math.max(0, all.length - MAX_REPORTED);
  if (all.length > 0) throw new ImportFailed(all.slice(0, MAX_REPORTED), more);
  return { counts, scoped };
}

/**
 * The size of the next chunk of a batched import's step: the last chunk's size scaled by how far
 * its hold of the write lock was from BATCHED.holdMs, so that the chunks settle at the size that
 * takes about that long, fixed costs included. Each step starts small (IMPORT_CHUNK.batched) and
 * grows by at most BATCHED.grow a chunk, while a slow chunk halves the next: a chunk's time varies
 * with the pages it happens to touch, so a size grown in one leap after a quick chunk is the one
 * that holds a server's write longest (docs/import.md §Sharing the database).
 */
class Pace {
  #size = IMPORT_CHUNK.batched;

  size(): number {
    return this.#size;
  }

  took(ms: number, objects: number): void {
    const scale = Math.max(0.5, Math.min(BATCHED.grow, BATCHED.holdMs / Math.max(1, ms)));
    this.#size = Math.max(BATCHED.min, Math.min(BATCHED.max, Math.round(objects * scale)));
  }
}

/** The spilled objects of one kind, checked again, in chunks of `size()` objects. */
async function* chunksOf(kind: ImportKind<any>, spill: Spill, size: () => number): AsyncGenerator<ImportItem<unknown>[]> {
  let chunk: ImportItem<unknown>[] = [];
  for await (const { line, raw } of spill.read(kind.object)) {
    chunk.push({ line, externalId: raw.externalId as string, value: kind.check(raw) });
    if (chunk.length >= size()) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/** Imports into ctx.actor's workspace; ctx.db is the database (the import opens its own transactions). */
export async function runImport(ctx: Ctx, input: ImportInput): Promise<ImportResult> {
  const { kinds } = input;
  const source = input.source ?? textSource(input.text ?? '');
  const mode = input.commit ?? 'atomic';
  const byObject = new Map(kinds.map((k) => [k.object, k]));
  const phases: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    phases[name] = secondsSince(mark);
    mark = performance.now();
  };
  const spill = await Spill.open();
  const store = input.ids ?? (await ImportIds.open());
  const undo: Array<() => Promise<void>> = [];
  let committed = false;
  // One replanning at a time, on another connection; the import waits for it only at its end.
  let replanning: Promise<void> | undefined;
  const kindOf = (object: string) => byObject.get(object) ?? kinds.find((k) => k.covers?.(object));
  // What a kind keeps for the whole import, from its check to its last write (`ImportContext.kept`).
  const kept = new Map<symbol, unknown>();
  const keep = <S>(key: symbol, make: () => S): S => {
    if (!kept.has(key)) kept.set(key, make());
    return kept.get(key) as S;
  };
  try {
    // References to externalIds that no line holds are looked up where the store sees those of
    // their kind: under the kind's object, or `record <slug>` for a custom type.
    const nameOf = (object: string) => {
      const kind = kindOf(object);
      return kind === undefined || kind.object === object ? object : `${kind.object} ${object}`;
    };
    const references = new References({ store, kindOf, nameOf }, { ...ctx, kept: keep });
    const { counts, scoped } = await checkAll(byObject, source, spill, store, references);
    // Before the first write, so that a reference to nothing writes nothing, in every mode.
    const nowhere = await references.check(kinds, spill, MAX_REPORTED);
    if (nowhere.errors.length > 0)
      throw new ImportFailed(
        nowhere.errors.map((e) => placed(source, e)),
        nowhere.more,
      );
    phase('check');
    let total = 0;
    for (const n of counts.values()) total += n * 2;

    const register = (object: string, externalId: string, id: string) => store.set(object, externalId, id);
    const known = (object: string, externalId: string): string | undefined => store.get(object, externalId);
    const resolve = async (object: string, externalId: string, at: { line: number; field: string }): Promise<string> => {
      const registered = known(object, externalId);
      if (registered) return registered;
      const kind = kindOf(object);
      const found = kind ? (await kind.lookup(importCtx, [externalId], object)).get(externalId) : undefined;
      if (!found) throw namesNothing(at.line, at.field, object, externalId, kind);
      return found;
    };
    const resolveAll = async (object: string, externalIds: Iterable<string>): Promise<Map<string, string>> => {
      const out = new Map<string, string>();
      const missing: string[] = [];
      for (const externalId of new Set(externalIds)) {
        const registered = known(object, externalId);
        if (registered) out.set(externalId, registered);
        else missing.push(externalId);
      }
      const kind = kindOf(object);
      if (missing.length > 0 && kind) for (const [externalId, id] of await kind.lookup(importCtx, missing, object)) out.set(externalId, id);
      return out;
    };
    // One context for the whole import (the record kinds keep their state in it, `kept`); its `db` is the
    // transaction of the chunk being written, opened before any kind runs.
    let open: Tx | undefined;
    let late = false;
    const importCtx: ImportContext = {
      ...ctx,
      get db(): Tx {
        if (!open) throw new Error('the import has no transaction open');
        return open;
      },
      resolve,
      resolveAll,
      register,
      known,
      externalIds: (name) => store.seenOf(name),
      kept: keep,
      newId: idSequence(ctx.now),
      claim: (group, value, line, note) => store.claim(group, value, line, note),
      claims: () => store.claims(),
      get reader() {
        return mode === 'atomic' ? importCtx.db : ctx.db;
      },
      bulkLoad: mode === 'atomic',
      get locksLate() {
        return late;
      },
      total: (object, scope) => (scope === undefined ? counts.get(object) : scoped.get(`${object} ${scope}`)) ?? 0,
    };
    const inTransaction = async (pace: Pace, objects: number, fn: () => Promise<unknown>) => {
      if (mode === 'atomic') return fn();
      // Between the chunks, where the server's write that waited has just gone: SQLite's log is
      // started again once it has grown past a bound (docs/import.md §Sharing the database).
      await restartLongLog(ctx.db);
      let began = 0;
      await write(ctx.db, async (tx) => {
        began = performance.now();
        open = tx;
        await planWithValues(tx);
        await fn();
        await settled(tx);
      });
      pace.took(performance.now() - began, objects);
      committed = true;
      // The lock is left free for a moment: a server's write waiting for it takes it now.
      await new Promise((resolve) => setTimeout(resolve, BATCHED.pauseMs));
    };
    let replanAt = GROWN.first;
    const grown = (done: number) => {
      if (mode !== 'atomic' || replanning || done < replanAt) return;
      replanAt = done * 2;
      // It only changes how other sessions read; a failure of it changes nothing the import writes.
      replanning = replanOthers(ctx.db)
        .catch(() => {})
        .finally(() => (replanning = undefined));
    };
    const writeAll = async () => {
      let done = 0;
      for (const step of ['upsert', 'link'] as const) {
        for (const kind of kinds) {
          if (!counts.has(kind.object) || (step === 'link' && !kind.link)) {
            done += counts.get(kind.object) ?? 0;
            continue;
          }
          const pace = new Pace();
          const size = () => (kind.whole ? Infinity : mode === 'batched' ? pace.size() : IMPORT_CHUNK.atomic);
          let left = counts.get(kind.object) ?? 0;
          for await (const items of chunksOf(kind, spill, size)) {
            if (step === 'upsert' && kind.prepare) {
              const prepared = await kind.prepare(ctx, items);
              undo.push(() => prepared.undo());
            }
            if (step === 'upsert' && kind.ahead) await inLine(items, () => kind.ahead!(importCtx, items));
            left -= items.length;
            await inTransaction(pace, items.length, () =>
              inLine(items, async () => {
                if (step === 'link') return kind.link?.(importCtx, items);
                await kind.upsert(importCtx, items);
                // The last chunk's transaction also ends what the kind's chunks began together.
                if (left === 0) await kind.finish?.(importCtx);
              }),
            );
            // Batched, a committed chunk's copies are its rows' now: only a failed chunk's are undone.
            if (mode === 'batched') undo.length = 0;
            done += items.length;
            grown(done);
            input.onProgress?.(step, done, total);
          }
        }
      }
    };
    if (mode === 'atomic') {
      await write(ctx.db, async (tx) => {
        open = tx;
        // The listings' locks are taken just before COMMIT, so that a server's creates into them
        // do not wait for the whole import (docs/import.md §Sharing the database).
        late = lockLate(tx);
        await planWithValues(tx);
        await writeAll();
        // The kinds send most of their writes without waiting for them: their work ends here, not at COMMIT.
        await settled(tx);
        phase('write');
        if (await takeLateLocks(tx)) {
          for (const kind of kinds) if (kind.underLocks && counts.has(kind.object)) await inLine([], () => kind.underLocks!(importCtx));
          await settled(tx);
          phase('listings');
        }
      });
      // With SQLite's WAL, the commit includes the checkpoint that copies what was written into the database.
      phase('commit');
    } else {
      await writeAll();
      phase('write');
    }
    const out: Record<string, number> = {};
    for (const [object, n] of counts) out[object] = n;
    return { counts: out, ids: input.ids ? {} : store.toRecord(), phases };
  } catch (err) {
    // What the chunks that were not committed prepared (the bytes of their files) is removed; the
    // chunks a batched import committed stay (docs/import.md §Sharing the database).
    for (const u of undo) await u().catch(() => {});
    // A reference the check found and the write did not (an object deleted meanwhile), a value a
    // definition refuses: found while writing, at the first.
    const failed = err instanceof ImportError ? new ImportFailed([placed(source, err)]) : err;
    if (failed instanceof ImportFailed) failed.committed = committed;
    throw failed;
  } finally {
    await replanning;
    await spill.remove();
    if (!input.ids) await store.close();
  }
}

// Kinds should raise ImportError with the item's line; a bare InputError is tied to the item when
// the group has only one.
async function inLine(items: ImportItem<unknown>[], fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof InputError && !(err instanceof ImportError)) {
      throw new ImportError(items.length === 1 ? (items[0] as ImportItem<unknown>).line : 0, err.param ?? '(object)', err.message);
    }
    throw err;
  }
}
