// Moving every link of a merge's duplicate onto its primary (docs/merge.md §Links): the rows other
// records hold to it point to the primary (one row kept where a record held both); its own rows
// join the primary's (has_many: the union, in order; has_one: the primary's when set, else the
// duplicate's, with a warning when both were set and differed); rows held by other trash entries
// are renamed, one row kept where an entry held both. Returns how many links moved, and the other
// live records whose relationships as the API shows them changed: those whose rows pointed to the
// duplicate, and those the primary now points to in its place.
import type { TypeDefinitions } from '../definitions/service.ts';
import type { WriteCtx } from '../lib/context.ts';
import * as records from '../records/repository.ts';
import { twoSided } from '../records/service.ts';
import * as repo from './repository.ts';

/** Targets that are never records, so never in the trash: members and files. */
const NOT_RECORDS = new Set(['member', 'file']);

export interface Moved {
  /** Links moved: rows repointed or taken by the primary, and rows held in the trash renamed. */
  count: number;
  /** The other live records whose relationships changed (docs/merge.md §Links). */
  others: string[];
}

export async function moveLinks(ctx: WriteCtx, defs: TypeDefinitions, primaryId: string, duplicateId: string, warnings: string[]): Promise<Moved> {
  const db = ctx.db;
  let moved = 0;
  // Every row either record holds or is held by, in one round trip; what the moves below change
  // of them is followed here, not read again.
  const rows = await repo.pairRows(db, [primaryId, duplicateId]);
  // The records the duplicate's own rows point to, locked against deletion until the merge commits,
  // as a write's links are (docs/trash.md): one that a delete moved to the trash after the read
  // is left out, its link held by its entry (renamed to the primary below), never made live again.
  const ends = rows.own[1].filter((r) => !NOT_RECORDS.has(r.object_type) && r.target_id !== duplicateId).map((r) => r.target_id);
  const live = ends.length === 0 ? new Map<string, string>() : await records.kindsOf(db, ends);
  // Who already links to the primary, under which name (the primary itself included).
  const self = rows.own[0].filter((r) => r.target_id === primaryId);
  const toPrimary = new Set([...rows.to[0], ...self].map((r) => `${r.source_id}\u0000${r.name}`));
  // rows.to leaves out the duplicate's own rows: they follow below.
  const dropped: repo.Row[] = [];
  const kept: repo.Row[] = [];
  for (const r of rows.to[1]) {
    const key = `${r.source_id}\u0000${r.name}`;
    if (toPrimary.has(key)) dropped.push(r);
    else {
      kept.push(r);
      toPrimary.add(key);
      moved++;
    }
  }
  await repo.deleteRows(db, dropped);
  await repo.retarget(db, kept, primaryId);

  // The primary's own rows as the moves left them: those dropped are gone, those kept point to it.
  const key = (r: repo.Row) => `${r.source_id}\u0000${r.name}\u0000${r.position}`;
  const [gone, turned] = [new Set(dropped.map(key)), new Set(kept.map(key))];
  const mine = new Map<string, repo.Row[]>();
  for (const r of rows.own[0]) {
    if (gone.has(key(r))) continue;
    const now = turned.has(key(r)) ? { ...r, target_id: primaryId } : r;
    mine.set(r.name, [...(mine.get(r.name) ?? []), now]);
  }
  const added: repo.Row[] = [];
  for (const r of rows.own[1]) {
    if (!NOT_RECORDS.has(r.object_type) && r.target_id !== duplicateId && !live.has(r.target_id)) continue;
    const target = r.target_id === duplicateId ? primaryId : r.target_id;
    const held = mine.get(r.name) ?? [];
    if (held.some((h) => h.target_id === target)) continue;
    if (defs.relationships.get(r.name)?.cardinality === 'has_one' && held.length > 0) {
      warnings.push(`${r.name}: the primary's ${held[0]?.target_id} was kept; the duplicate's ${target} was dropped.`);
      continue;
    }
    const row = { ...r, source_id: primaryId, target_id: target, position: held.reduce((m, h) => Math.max(m, h.position + 1), 0) };
    mine.set(r.name, [...held, row]);
    added.push(row);
  }
  await repo.deleteOwnRows(db, duplicateId);
  await repo.insertRows(db, added);
  moved += added.length;
  // A record the primary now links to in the duplicate's place shows the change where the API's
  // write of that link would move its updatedAt too.
  const shows = (r: repo.Row) => {
    const def = defs.relationships.get(r.name);
    return !NOT_RECORDS.has(r.object_type) && def !== undefined && twoSided(defs, def);
  };
  const others = new Set([...rows.to[1].map((r) => r.source_id), ...added.filter(shows).map((r) => r.target_id)]);
  for (const id of [primaryId, duplicateId]) others.delete(id);
  return { count: moved + (await repo.repointHeld(db, new Map([[duplicateId, primaryId]]))), others: [...others] };
}
