// The records an import updates rather than creates, and the check that it wrote each under the
// id it meant (docs/import.md §Speed, §Sharing the database).
import type { Executor } from '../db/index.ts';
import { ImportError, type ImportContext, type ImportItem } from '../import/kind.ts';
import { type RecordInput, stateOf } from './import-links.ts';
import * as repo from './repository.ts';

/** ExternalIds looked up a statement (`existingOf`). */
const LOOKUP_BATCH = 500;

/**
 * Every externalId of the type `kind` in the import that names a record of the workspace, looked
 * up once, before any of the type's rows is written, and registered with its id (on disk,
 * docs/import.md §Memory); a chunk then only asks what was registered (an import's externalIds are
 * unique per type, so no earlier chunk of it registered one of its own). A batched import looks
 * them up before its first chunk's transaction (`ahead`, reading `ctx.reader`), so that no
 * server's write waits for them (docs/import.md §Sharing the database). Looked up chunk by chunk,
 * the lookups read a table growing under them, and PostgreSQL, whose statistics still count the
 * rows from before the import, chose the type's listing index over the externalIds' one: each
 * lookup read every row the import had written so far (docs/import.md §Speed).
 */
export async function lookUpExisting(ctx: ImportContext, owner: string, kind: string, db: Executor = ctx.reader): Promise<void> {
  const state = stateOf(ctx);
  if (state.lookedUp.has(kind)) return;
  state.lookedUp.add(kind);
  const name = owner === kind ? kind : `${owner} ${kind}`;
  let batch: string[] = [];
  const flush = async () => {
    for (const [externalId, id] of await repo.recordsByExternalId(db, ctx.actor.workspaceId, kind, batch)) ctx.register(kind, externalId, id);
    batch = [];
  };
  for (const externalId of ctx.externalIds(name)) {
    batch.push(externalId);
    if (batch.length >= LOOKUP_BATCH) await flush();
  }
  await flush();
}

/**
 * The records of the items that exist, by externalId (`lookUpExisting`); looked up in the chunk's
 * transaction when no `ahead` did before it (one transaction's first chunk).
 */
export async function existingOf(ctx: ImportContext, owner: string, kind: string, items: ImportItem<RecordInput>[]): Promise<Map<string, string>> {
  await lookUpExisting(ctx, owner, kind, ctx.db);
  const out = new Map<string, string>();
  for (const item of items) {
    const id = ctx.known(kind, item.externalId);
    if (id !== undefined) out.set(item.externalId, id);
  }
  return out;
}

/**
 * Every row upserted so far was written under the id the import gave it (those whose statements
 * ran; with `wait`, all). A row held by another id is one a writer gave the same externalId while
 * the import ran (a record restored from the trash): the upsert leaves it alone, and the import
 * stops rather than count a record it did not write.
 */
export async function writtenAsMeant(ctx: ImportContext, wait: boolean): Promise<void> {
  const state = stateOf(ctx);
  const left: typeof state.unchecked = [];
  for (const u of state.unchecked) {
    const ids = await u.written(wait);
    if (ids === undefined) {
      left.push(u);
      continue;
    }
    const missed = u.meant.find((m) => !ids.has(m.id));
    if (missed)
      throw new ImportError(
        missed.line,
        'externalId',
        `another ${u.kind} took "${missed.externalId}" while this import ran (restored from the trash); import again`,
      );
  }
  state.unchecked = left;
}
