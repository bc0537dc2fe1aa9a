// SQL of the value index (docs/records.md §Value index, docs/filtering.md §Indexes): the rows of
// record_values and the trigram postings of `contains`, rewritten together in the transaction of
// every record write, and the bulk form an import writes them in.
import { type BulkLoadState, chunks, deferred, dropIndexesUntilBuilt, insertRows, type Executor, type Tx } from '../../db/index.ts';
import { sql } from 'kysely';
import type { TypeDefinitions } from '../../definitions/service.ts';
import { emailKey } from '../../lib/email.ts';
import type { RecordValuesTable } from '../tables.ts';
import type { IndexedScalar } from './values.ts';
import type { RecordTrigramPacksTable, RecordTrigramsTable } from './tables.ts';
import { type FacetLoad, writeFacets } from './facets.ts';
import { addTrigramKeys, CONTAINS_TYPES, type FieldHash, fieldHash } from './trigrams.ts';

/**
 * Rewrites everything that indexes record values: the value index, the trigrams that serve
 * `contains` and the ranked sets of listed values (docs/filtering.md). The rows of `recordIds` are removed, then `rows` written; `rows`
 * may also hold rows of records created in this transaction, which have none to remove. Every
 * writer of records calls this one function, so no writer can leave filters behind.
 */
export async function writeValueIndex(tx: Tx, defs: TypeDefinitions, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  // The trigrams first: they read the old values to know which postings to remove.
  await replaceTrigrams(tx, defs, recordIds, rows);
  const load = loading(tx);
  await writeFacets(tx, defs, recordIds, rows, load?.objectType === defs.objectType && recordIds.length === 0 ? load.facets : undefined);
  await replaceValues(tx, recordIds, rows);
}

/** Replaces the value-index rows of `recordIds` by `rows` (docs/records.md §Value index). */
export async function replaceValues(tx: Tx, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  for (const part of chunks([...recordIds])) await deferred(tx, tx.deleteFrom('record_values').where('record_id', 'in', part));
  // 6 values a row.
  await insertRows(tx, 'record_values', ['workspace_id', 'object_type', 'field', 'value_text', 'value_num', 'record_id'], rows, 800);
}

/**
 * The secondary indexes a bulk load builds after its rows (docs/import.md §Speed), those keyed by
 * something other than the new ids: the value table's by value, and the links' by target (a
 * million contacts link to 20,000 accounts). They would take a bulk import's rows all over their
 * B-trees, one page at a time. The value table's third, `record_values_record`, is keyed by
 * record id, and an import's new ids grow (`idSequence`): its rows are appended at the index's
 * end, on the writer thread, while the main thread builds the next batch, which a build after
 * the rows could not overlap. Nothing in a bulk load's batches reads the links
 * by target: they only insert. The trigram table has no secondary index; its primary key is the
 * table (docs/filtering.md §Indexes).
 */
const DEFERRED_INDEXES = ['record_values_text', 'record_values_num', 'entity_relationships_inverse'];

/**
 * The memory SQLite's sorter may fill before it writes a sorted run, per index build, in KiB.
 * SQLite takes that bound from the connection's cache_size, and only runs past it are sorted on
 * the helper threads (`pragma threads`) while the table is still being read; one run held in
 * memory is sorted on the building thread alone. The text index's entries, many and in no order,
 * sort faster in runs on the helpers (docs/import.md §Speed). Each helper holds a run of its own
 * while the building thread fills the next, so the sorter may hold (helpers + 1) runs at once:
 * runs of 4 MB for every index keep that within the import's memory bound (docs/import.md
 * §Memory), where the cache's own bound would let each run grow to the cache's size.
 */
const SORT_RUNS: Record<string, number | undefined> = { record_values_text: 4096, record_values_num: 4096, entity_relationships_inverse: 4096 };

/** A bulk load in progress: `end` writes what it still holds and builds what it dropped. */
export interface BulkLoad {
  end(): Promise<void>;
  /** The ranked sets of select values its records went to (rankFacetsAfterLoad). */
  readonly facets: FacetLoad;
}

/**
 * Starts a bulk load of `objectType` in `tx`: the writes of an import that only creates records
 * of a type that had none, over as many of its chunks as it takes, so that nothing reads,
 * rewrites or deletes these tables' rows of that type until `end`. Meanwhile the postings of new
 * records are gathered into packs on both databases (docs/filtering.md §Indexes, Packs), and on
 * SQLite the indexes of DEFERRED_INDEXES are dropped, to be built once after every row
 * (docs/import.md §Speed).
 */
export async function startBulkLoad(tx: Tx, objectType: string, createdAt: string): Promise<BulkLoad> {
  const build = await dropIndexesUntilBuilt(tx, DEFERRED_INDEXES, SORT_RUNS);
  const pending: Pending = { byKey: new Map(), postings: 0, objectType, facets: { createdAt, sets: new Map() } };
  tx.bulk = pending;
  return {
    facets: pending.facets,
    async end() {
      tx.bulk = undefined;
      // The last packs are sent before the index builds: behind them, they would hold the
      // import's main thread until every build had run (the writer thread takes a bounded queue).
      await writePacks(tx, pending);
      await build();
    },
  };
}

/**
 * The records of `objectType` in the workspace whose `field` holds one of the index values
 * `values` (folded as the index stores them), by value, each value's ids in id order.
 */
export async function recordIdsByValues(
  db: Executor,
  workspaceId: string,
  objectType: string,
  field: string,
  values: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const part of chunks([...new Set(values)])) {
    const rows = await db
      .selectFrom('record_values')
      .select(['value_text', 'record_id'])
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', objectType)
      .where('field', '=', field)
      .where('value_text', 'in', part)
      .orderBy('record_id')
      .execute();
    for (const r of rows) {
      const key = r.value_text as string;
      const ids = out.get(key) ?? [];
      if (!ids.includes(r.record_id)) ids.push(r.record_id);
      out.set(key, ids);
    }
  }
  return out;
}

/**
 * The contacts of the workspace whose `$email` holds one of `emails`, ignoring case and the form of
 * the domain, by the address's key (emailKey, docs/records.md §E-mail addresses). Meetings and
 * emails derive their `$contact` with it.
 */
export function contactIdsByEmails(db: Executor, workspaceId: string, emails: readonly string[]): Promise<Map<string, string[]>> {
  return recordIdsByValues(db, workspaceId, 'contact', '$email', emails.map(emailKey));
}

/** The accounts of the workspace whose `$website` host is one of `hosts` (folded), by host. */
export function accountsByHosts(db: Executor, workspaceId: string, hosts: readonly string[]): Promise<Map<string, string[]>> {
  return recordIdsByValues(db, workspaceId, 'account', '$website.host', hosts);
}

/**
 * Whether another record of the type holds this value of a field (unique fields), through the value
 * index; `value` is one scalar in the index's form (indexedScalar, values.ts).
 */
export async function valueTaken(db: Executor, workspaceId: string, kind: string, field: string, value: IndexedScalar, exceptId: string): Promise<boolean> {
  const row = await holdersOf(db, workspaceId, kind, field, value, exceptId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The records of the type other than `exceptId` that hold `value` in field `field` (by the value index). */
export async function valueHolders(db: Executor, workspaceId: string, kind: string, field: string, value: IndexedScalar, exceptId: string): Promise<string[]> {
  const rows = await holdersOf(db, workspaceId, kind, field, value, exceptId).distinct().execute();
  return rows.map((r) => r.record_id);
}

/** The value index's rows of records other than `exceptId` holding `value` in `field`. */
function holdersOf(db: Executor, workspaceId: string, kind: string, field: string, value: IndexedScalar, exceptId: string) {
  return db
    .selectFrom('record_values')
    .select('record_id')
    .where('workspace_id', '=', workspaceId)
    .where('object_type', '=', kind)
    .where('field', '=', field)
    .where((eb) => (value.text !== undefined ? eb('value_text', '=', value.text) : eb('value_num', '=', value.num)))
    .where('record_id', '!=', exceptId);
}

/**
 * Replaces the postings of `recordIds` by those of `rows` (the records' value-index rows, as
 * replaceValues writes them): one per distinct trigram key of each field whose valueType is
 * filtered with `contains`. The old postings are the trigrams of the old values (a field's
 * valueType never changes), read before replaceValues removes them, so only the difference is
 * deleted and inserted and no index by record is needed. Call it in the same transaction, before
 * replaceValues.
 */
export async function replaceTrigrams(tx: Tx, defs: TypeDefinitions, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  const fields = new Set([...defs.fields.values()].filter((f) => CONTAINS_TYPES.has(f.valueType)).map((f) => f.key));
  if (fields.size === 0) return;
  // New records of a bulk import: nothing to compare, their postings are gathered for packs.
  const pending = loading(tx);
  if (pending !== undefined && recordIds.length === 0) {
    pending.postings += addPostings(rows, fields, pending.byKey);
    if (pending.postings >= PACKS.postings) await writePacks(tx, pending);
    return;
  }
  let fresh = trigramRows(rows, fields);
  if (recordIds.length > 0) {
    const old: RecordValuesTable[] = [];
    for (const part of chunks([...recordIds])) {
      old.push(
        ...(await tx
          .selectFrom('record_values')
          .selectAll()
          .where('record_id', 'in', part)
          .where('field', 'in', [...fields])
          .execute()),
      );
    }
    const pair = (r: RecordTrigramsTable) => `${r.key}|${r.record_id}`;
    const had = trigramRows(old, fields);
    const kept = new Set(fresh.map(pair));
    const stale = had.filter((r) => !kept.has(pair(r)));
    const present = new Set(had.map(pair));
    fresh = fresh.filter((r) => !present.has(pair(r)));
    // 2 values a posting; the cast makes PostgreSQL compare bigint with bigint.
    for (const part of chunks(stale, 1000)) {
      const list = sql.join(part.map((r) => sql`(cast(${r.key} as bigint), ${r.record_id})`));
      await deferred(tx, sql`delete from record_trigrams where (key, record_id) in (values ${list})`);
    }
  }
  await insertRows(tx, 'record_trigrams', ['key', 'record_id'], fresh, 2000);
}

// A bulk import's postings (docs/import.md §Speed, docs/filtering.md §Indexes, Packs): one row per
// key for every PACKS.postings gathered instead of one per posting, because a posting row per
// (key, record) makes a bulk import's posting table its largest and slowest write. They are kept
// on the transaction as its bulk load (`Tx.bulk`), which only startBulkLoad sets.

/** Postings gathered for packs, by key, in the order of their records. */
interface Pending extends BulkLoadState {
  byKey: Map<number, string[]>;
  postings: number;
  /** The type bulk-loaded: its new records' ranked sets are counted after the load (rankFacetsAfterLoad). */
  readonly objectType: string;
  /** Its records' `created_at`, and the ranked sets its facet rows went to. */
  readonly facets: FacetLoad;
}

/** The bulk load in progress in `db`, if it is a transaction that started one. */
function loading(db: Executor): Pending | undefined {
  return 'bulk' in db ? (db.bulk as Pending | undefined) : undefined;
}

// Postings gathered over several batches before their packs are written (some 7,000 contacts of
// a few e-mails each): a pack row costs SQLite mostly per row, so fewer and longer ones cost less.
// Bounded, because the gathered postings and the packs built from them are held at once while
// they are written: the bound is part of the import's memory bound (docs/import.md §Memory).
// Tests make it smaller.
export const PACKS = { postings: 250_000 };

async function writePacks(tx: Tx, pending: Pending): Promise<void> {
  const rows = packs(pending.byKey);
  pending.byKey = new Map();
  pending.postings = 0;
  await insertRows(tx, 'record_trigram_packs', ['key', 'first_id', 'prefix', 'tails', 'n'], rows, 500);
}

/** Postings grouped by key (addPostings) as one pack per key, in key order: its ids sorted, their common prefix kept once. */
function packs(byKey: ReadonlyMap<number, string[]>): RecordTrigramPacksTable[] {
  const out: RecordTrigramPacksTable[] = [];
  for (const key of Float64Array.from(byKey.keys()).sort()) {
    // Already in order when the records' ids are (an import's new ids are): a linear pass.
    const ids = byKey.get(key)!.sort();
    const first = ids[0]!;
    const last = ids[ids.length - 1]!;
    let p = 0;
    while (p < first.length && first.charCodeAt(p) === last.charCodeAt(p)) p++;
    out.push({ key, first_id: first, prefix: first.slice(0, p), tails: JSON.stringify(ids.map((id) => id.slice(p))), n: ids.length });
  }
  return out;
}

/**
 * The postings of the value-index rows of `fields` (distinct per record and key), in key order so
 * that a batch fills the B-tree key by key. Within a key they stay in the order of `rows` (a
 * batch's records in creation order, nearly id order): comparing the ids as well cost an import
 * more than the inserts it orders. Grouped by key while they are made, so only the distinct keys
 * are sorted.
 */
export function trigramRows(rows: readonly RecordValuesTable[], fields: ReadonlySet<string>): RecordTrigramsTable[] {
  const byKey = new Map<number, string[]>();
  addPostings(rows, fields, byKey);
  const out: RecordTrigramsTable[] = [];
  for (const key of Float64Array.from(byKey.keys()).sort()) for (const record_id of byKey.get(key)!) out.push({ key, record_id });
  return out;
}

/**
 * Adds to `byKey` (key → record ids) the postings of the value-index rows of `fields` (distinct
 * per record and key), in the order of `rows`; returns how many. A bulk import's batches add to
 * the postings gathered for their packs directly.
 */
function addPostings(rows: readonly RecordValuesTable[], fields: ReadonlySet<string>, byKey: Map<number, string[]>): number {
  // The keys already given, per record (one array a record, not one a trigram). A record's rows
  // come one after another (valueRows), so the last record's array is usually the one.
  const given = new Map<string, number[]>();
  let record: string | undefined;
  let keys: number[] = [];
  // A batch holds a few fields: each hashed once, and looked up again only when the field changes.
  const bases = new Map<string, FieldHash>();
  let [ws, type, field] = ['', '', ''];
  let base: FieldHash | undefined;
  let added = 0;
  for (const r of rows) {
    if (!fields.has(r.field) || r.value_text === null) continue;
    if (r.record_id !== record) {
      record = r.record_id;
      const had = given.get(record);
      if (had === undefined) given.set(record, (keys = []));
      else keys = had;
    }
    if (base === undefined || r.workspace_id !== ws || r.object_type !== type || r.field !== field) {
      [ws, type, field] = [r.workspace_id, r.object_type, r.field];
      const sk = `${ws}\u0000${type}\u0000${field}`;
      base = bases.get(sk);
      if (base === undefined) bases.set(sk, (base = fieldHash(ws, type, field)));
    }
    const from = keys.length;
    addTrigramKeys(base, r.value_text, keys);
    for (let i = from; i < keys.length; i++) {
      const k = keys[i]!;
      const ids = byKey.get(k);
      if (ids === undefined) byKey.set(k, [r.record_id]);
      else ids.push(r.record_id);
    }
    added += keys.length - from;
  }
  return added;
}
