// Runs one import: parse (NDJSON or a JSON array), check every object, then apply all of it in
// one transaction, kind by kind in dependency order, so an import is all-or-nothing.
import type { Ctx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { settled } from '../db/pipeline.ts';
import { idSequence } from '../lib/ids.ts';
import { ImportError, type ImportContext, type ImportItem, type ImportKind } from './kind.ts';

export interface ImportResult {
  counts: Record<string, number>;
  /** object → externalId → server id */
  ids: Record<string, Record<string, string>>;
  /** Seconds each step took, in order (docs/import.md §Rules). */
  phases: Record<string, number>;
}

export interface ImportInput {
  /** The kinds this import may hold (src/cli/import-kinds.ts lists them all). */
  kinds: ImportKind<any>[];
  /** NDJSON or a JSON array. */
  text: string;
  onProgress?: (phase: string, done: number, total: number) => void;
}

const MAX_REPORTED = 50;

/** Seconds since `start` (a `performance.now()`), to the millisecond: the unit of a summary's `phases`. */
export function secondsSince(start: number): number {
  return Math.round(performance.now() - start) / 1000;
}

/**
 * The text's objects, one at a time, with the line (NDJSON) or item number (JSON array) of each.
 * One at a time so that each is checked, and the parsed object dropped, before the next is
 * parsed: held until the whole file was parsed, a million of them outlived the young generation
 * and were traced by every full garbage collection until the end of the checks.
 */
function* parseImport(text: string): Generator<{ line: number; value: unknown }> {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(text);
    } catch (err) {
      throw new ImportError(0, '(file)', `not valid JSON: ${(err as Error).message}`);
    }
    const items = arr as unknown[];
    for (let i = 0; i < items.length; i++) yield { line: i + 1, value: items[i] };
    return;
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = (lines[i] as string).trim();
    if (l === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(l);
    } catch (err) {
      throw new ImportError(i + 1, '(line)', `not valid JSON: ${(err as Error).message}`);
    }
    yield { line: i + 1, value };
  }
}

export class ImportFailed extends Error {
  override name = 'ImportFailed';
  readonly errors: ImportError[];
  constructor(errors: ImportError[]) {
    super(errors.map((e) => e.message).join('\n'));
    this.errors = errors;
  }
}

/** Imports into ctx.actor's workspace; ctx.db is the database (the import opens its own transaction). */
export async function runImport(ctx: Ctx, input: ImportInput): Promise<ImportResult> {
  const { kinds, text } = input;
  const byObject = new Map(kinds.map((k) => [k.object, k]));
  const groups = new Map<string, ImportItem<unknown>[]>(kinds.map((k) => [k.object, []]));
  const errors: ImportError[] = [];
  const seen = new Set<string>();
  const phases: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    phases[name] = secondsSince(mark);
    mark = performance.now();
  };
  let objects = 0;
  for (const { line, value } of parseImport(text)) {
    objects++;
    if (errors.length >= MAX_REPORTED) break;
    try {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('each entry must be a JSON object', '(object)');
      const raw = value as Record<string, unknown>;
      const kind = byObject.get(raw.object as string);
      if (!kind) throw new InputError(`must be one of ${[...byObject.keys()].join(', ')}`, 'object');
      const ext = raw.externalId;
      if (typeof ext !== 'string' || ext.length < 1 || ext.length > 255) throw new InputError('must be a string of 1 to 255 characters', 'externalId');
      const checked: unknown = kind.check(raw);
      const scope = kind.scope?.(checked);
      const name = scope === undefined ? kind.object : `${kind.object} ${scope}`;
      if (seen.has(`${name}:${ext}`)) throw new InputError(`"${ext}" appears twice for ${name}`, 'externalId');
      seen.add(`${name}:${ext}`);
      groups.get(kind.object)?.push({ line, externalId: ext, value: checked });
    } catch (err) {
      if (!(err instanceof InputError) || err instanceof ImportError) throw err;
      errors.push(new ImportError(line, err.param ?? '(object)', err.message));
    }
  }
  if (errors.length > 0) throw new ImportFailed(errors);
  phase('check');
  const total = objects * 2;

  const ids: Record<string, Record<string, string>> = {};
  const register = (object: string, externalId: string, id: string) => {
    (ids[object] ??= {})[externalId] = id;
  };

  const undo: Array<() => Promise<void>> = [];
  try {
    for (const kind of kinds) {
      const items = groups.get(kind.object) as ImportItem<unknown>[];
      if (!kind.prepare || items.length === 0) continue;
      const prepared = await kind.prepare(ctx, items);
      undo.push(() => prepared.undo());
    }
    if (undo.length > 0) phase('prepare');
    await ctx.db.transaction().execute(async (tx) => {
      const inTx = { ...ctx, db: tx };
      const known = (object: string, externalId: string): string | undefined => ids[object]?.[externalId];
      const resolve = async (object: string, externalId: string, at: { line: number; field: string }): Promise<string> => {
        const registered = known(object, externalId);
        if (registered) return registered;
        const kind = byObject.get(object) ?? kinds.find((k) => k.covers?.(object));
        const found = kind ? (await kind.lookup(inTx, [externalId], object)).get(externalId) : undefined;
        if (!found) throw new ImportError(at.line, at.field, `no ${object} with externalId "${externalId}" in this import or the workspace`);
        return found;
      };
      const importCtx: ImportContext = { ...inTx, resolve, register, known, newId: idSequence(ctx.now) };
      let done = 0;
      for (const step of ['upsert', 'link'] as const) {
        for (const kind of kinds) {
          const items = groups.get(kind.object) as ImportItem<unknown>[];
          if (items.length === 0) continue;
          await inLine(items, async () => (step === 'upsert' ? kind.upsert(importCtx, items) : kind.link?.(importCtx, items)));
          done += items.length;
          input.onProgress?.(step, done, total);
        }
      }
      // The kinds send most of their writes without waiting for them: their work ends here, not at COMMIT.
      await settled(tx);
      phase('write');
    });
    // With SQLite's WAL, the commit includes the checkpoint that copies what was written into the database.
    phase('commit');
  } catch (err) {
    for (const u of undo) await u().catch(() => {});
    if (err instanceof ImportError) throw new ImportFailed([err]);
    throw err;
  }
  const counts: Record<string, number> = {};
  for (const [object, items] of groups) if (items.length > 0) counts[object] = items.length;
  return { counts, ids, phases };
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
