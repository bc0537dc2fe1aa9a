// What `rolodex export --include-trash` changes in a trashed record so that its import, which
// brings it back live, takes it (docs/import.md §Export): the trash keeps a record's externalId and
// unique values while another record, live or trashed, takes them, and an import refuses two
// records of a type with one externalId or one value of a unique field. Of the records of a type
// holding one, a live record keeps it, else the trashed record deleted last; the others are
// written under their server id (as a record without an externalId is) and without that value.
import { ScratchStore, type ScratchMap } from '../db/index.ts';
import { loadDefinitions, type TypeDefinitions } from '../definitions/service.ts';
import type { Ctx } from '../lib/context.ts';
import { keysetPagesBy } from '../lib/paging.ts';
import { valueTaken } from '../records/index/repository.ts';
import { type IndexedScalar, indexedScalar } from '../records/index/values.ts';
import { externalIdsTaken, type RecordRow } from '../records/repository.ts';
import * as repo from './repository.ts';
import type { TrashPayload } from './service.ts';

const PAGE = 500;
/** Pages of the scratch store held in memory; the rest stays in its file (docs/import.md §Memory). */
const CACHE_KIB = 1024;

export function recordOf(entry: repo.TrashRow): RecordRow | undefined {
  return (JSON.parse(entry.payload) as TrashPayload).record;
}

/** The externalIds noted for `type`, read from the scratch store a page at a time. */
function* noted(last: ScratchMap, type: string): Generator<string[]> {
  let part: string[] = [];
  for (const [externalId] of last.entries(`x\u0000${type}`)) {
    part.push(externalId);
    if (part.length === PAGE) {
      yield part;
      part = [];
    }
  }
  if (part.length > 0) yield part;
}

const key = (x: IndexedScalar) => (x.text !== undefined ? `t:${x.text}` : `n:${x.num}`);

/** Each value of a unique field that `row` holds, as the value index compares it. */
function uniqueValues(defs: TypeDefinitions, row: RecordRow): { field: string; value: unknown; indexed: IndexedScalar }[] {
  const out: { field: string; value: unknown; indexed: IndexedScalar }[] = [];
  for (const [field, v] of Object.entries(JSON.parse(row.fields) as Record<string, unknown>)) {
    const def = defs.fields.get(field);
    if (v === null || !def?.unique) continue;
    for (const value of Array.isArray(v) ? (v as unknown[]) : [v]) {
      const indexed = indexedScalar(def.valueType, value);
      if (indexed !== undefined) out.push({ field, value, indexed });
    }
  }
  return out;
}

export interface TrashClashes {
  /** The trashed record as its line writes it: its externalId and its unique values kept only where it keeps them. */
  kept(row: RecordRow): Promise<RecordRow>;
  /** The name the export gives the trashed record: its externalId where it keeps it, else its id. */
  name(row: RecordRow): string;
  /** Values of unique fields left out so far. */
  readonly dropped: number;
  close(): Promise<void>;
}

/**
 * Reads the trash of `types` once, before any line is written (a live record's line may name a
 * trashed one), noting for each externalId and unique value the trashed record deleted last that
 * holds it, then asks which of those externalIds a live record holds, a chunk at a time: the
 * answer is one per record for the whole export, however many lines name it, and its own line
 * and every link to it agree. The notes stay on disk: memory does not grow with the trash.
 */
export async function trashClashes(ctx: Ctx, types: readonly string[]): Promise<TrashClashes> {
  const store = await ScratchStore.open({ tables: ['last', 'taken'], cacheKiB: CACHE_KIB, prefix: 'rolodex-export-trash-' });
  const last: ScratchMap = store.table('last');
  /** Per type, the noted externalIds that a live record holds. */
  const taken: ScratchMap = store.table('taken');
  const defsOf = new Map<string, TypeDefinitions>();
  const ws = ctx.actor.workspaceId;
  try {
    for (const type of types) {
      const defs = await loadDefinitions(ctx, { objectType: type });
      if (!defs) continue;
      defsOf.set(type, defs);
      const page = (after: { deletedAt: string; id: string } | undefined) => repo.trashedRecordsPage(ctx.db, ws, type, after, PAGE);
      // In the order of deletion: the one deleted last is noted last, over the others.
      for await (const entries of keysetPagesBy(page, (e) => ({ deletedAt: e.deleted_at, id: e.id }))) {
        for (const row of entries.map(recordOf)) {
          if (!row) continue;
          if (row.external_id !== null) last.put(`x\u0000${type}`, row.external_id, row.id);
          for (const u of uniqueValues(defs, row)) last.put(`u\u0000${type}\u0000${u.field}`, key(u.indexed), row.id);
        }
      }
      for (const part of noted(last, type)) for (const id of await externalIdsTaken(ctx.db, ws, type, part)) taken.add(type, id);
    }
  } catch (err) {
    await store.close();
    throw err;
  }
  const keepsExternalId = (row: RecordRow) =>
    row.external_id !== null && last.get(`x\u0000${row.kind}`, row.external_id) === row.id && taken.get(row.kind, row.external_id) === undefined;
  let dropped = 0;
  return {
    name(row) {
      return keepsExternalId(row) ? (row.external_id as string) : row.id;
    },
    async kept(row) {
      const defs = defsOf.get(row.kind);
      const externalId = keepsExternalId(row) ? row.external_id : null;
      const fields = JSON.parse(row.fields) as Record<string, unknown>;
      let changed = false;
      for (const u of defs ? uniqueValues(defs, row) : []) {
        const keeps =
          last.get(`u\u0000${row.kind}\u0000${u.field}`, key(u.indexed)) === row.id && !(await valueTaken(ctx.db, ws, row.kind, u.field, u.indexed, row.id));
        if (keeps) continue;
        const v = fields[u.field];
        const rest = Array.isArray(v) ? v.filter((x) => x !== u.value) : [];
        fields[u.field] = rest.length > 0 ? rest : null;
        changed = true;
        dropped++;
      }
      return { ...row, external_id: externalId, ...(changed ? { fields: JSON.stringify(fields) } : {}) };
    },
    get dropped() {
      return dropped;
    },
    close: () => store.close(),
  };
}
