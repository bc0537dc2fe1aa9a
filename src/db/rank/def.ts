// Ranked sets (docs/pages.md): what a set is, the sizes of its buckets, and the partition keys.

export interface RankDef {
  /** Prefix of the partition keys of this set in rank_buckets. */
  name: string;
  table: string;
  /** Equality columns that select one partition's rows; a partition is named by their values. */
  by: readonly string[];
  /** Constant conditions every ranked row meets (e.g. only listable files). */
  where?: Readonly<Record<string, string>>;
  /** The order key: newest first by `ts`, ties by `id` (descending). `id` is unique in a partition. */
  ts: string;
  id: string;
  /**
   * Parts of a partition, counted apart on every entry (docs/pages.md §Parts): a row whose `when`
   * column holds `value` belongs to the part named by its `column` (never ''); every other row to
   * the shared part ''. A reader counts and reads only the parts it may see.
   */
  part?: { column: string; when: { column: string; value: string } };
  /**
   * Creates may take the partition's lock shared and count their rows as deltas (docs/pages.md §Creates
   * that only insert); only then do pages read the deltas. Not with parts.
   */
  appends?: boolean;
}

export interface RankKey {
  ts: string;
  id: string;
  /** The row's part, for a set with parts. */
  part?: string;
}

export interface RankSizes {
  /** Rows per leaf: split above max into pieces of about target, merged below min. */
  leaf: { max: number; target: number; min: number };
  /** Entries below per entry of the levels above. */
  fanout: { max: number; target: number; min: number };
  /** Count deltas a partition gathers before they are folded into its entries (docs/pages.md §Creates that only insert). */
  fold: number;
}

/** Levels of entries per partition; changing it needs a migration that rebuilds every partition. */
export const LEVELS = 2;

export const DEFAULT_SIZES: RankSizes = { leaf: { max: 1024, target: 512, min: 128 }, fanout: { max: 64, target: 32, min: 8 }, fold: 256 };

let current: RankSizes = DEFAULT_SIZES;

/** Bucket sizes for tests and benchmarks (small ones make splits and merges happen); none = default. */
export function setRankSizes(sizes?: Omit<RankSizes, 'fold'> & { fold?: number }): void {
  current = sizes ? { ...sizes, fold: sizes.fold ?? DEFAULT_SIZES.fold } : DEFAULT_SIZES;
}

export function rankSizes(): RankSizes {
  return current;
}

/** Keys of one batch from which a partition is counted as a whole (again from its rows, or from a run) rather than key by key: several full leaves. */
export function manyKeys(): number {
  return 4 * current.leaf.max;
}

const NAME = /^[a-z_][a-z0-9_]*$/;
const LITERAL = /^[A-Za-z0-9_]+$/;

/** Checks a definition once, where it is declared: its names are written into SQL. */
export function defineRank(def: RankDef): RankDef {
  const part = def.part ? [def.part.column, def.part.when.column] : [];
  for (const n of [def.table, def.ts, def.id, ...def.by, ...Object.keys(def.where ?? {}), ...part]) {
    if (!NAME.test(n)) throw new Error(`rank ${def.name}: "${n}" is not a plain column or table name`);
  }
  // Written into the statements as a literal, so that a partial index on it can serve them.
  if (def.part && !LITERAL.test(def.part.when.value)) throw new Error(`rank ${def.name}: "${def.part.when.value}" is not a plain value`);
  if (def.by.length === 0) throw new Error(`rank ${def.name}: at least one partition column`);
  if (def.part && def.appends) throw new Error(`rank ${def.name}: a set with parts counts every insert in place`);
  return Object.freeze({ ...def });
}

/** SQL of a row's part, for the row under `alias`. */
export function partOf(def: RankDef, alias: string): string {
  const p = def.part;
  if (!p) return `''`;
  return `case when ${alias}."${p.when.column}" = '${p.when.value}' then ${alias}."${p.column}" else '' end`;
}

/** SQL conditions selecting the rows of the shared part '' (true), or of one named part (false). */
export function inPart(def: RankDef, alias: string, shared: boolean): string {
  const p = def.part;
  if (!p) throw new Error(`rank ${def.name}: no parts`);
  return `${alias}."${p.when.column}" ${shared ? '<>' : '='} '${p.when.value}'`;
}

/** The partition's key in rank_buckets. */
export function partitionKey(def: RankDef, values: readonly string[]): string {
  if (values.length !== def.by.length) throw new Error(`rank ${def.name}: ${values.length} partition values for ${def.by.length} columns`);
  return [def.name, ...values].join(':');
}

/**
 * The one order in which a writer takes several partitions of the sets that declare `appends`
 * (docs/design.md §Database, "The order of locks"): by their values compared one by one (as
 * JavaScript compares text), a partition before those whose values extend its own (a type's
 * listing before its value sets), the set's name last. Joined by NUL, which no stored text holds,
 * the values compare as they do one by one.
 */
export function lockOrder(
  a: { readonly def: RankDef; readonly values: readonly string[] },
  b: { readonly def: RankDef; readonly values: readonly string[] },
): number {
  const [x, y] = [a.values.join('\u0000'), b.values.join('\u0000')];
  if (x !== y) return x < y ? -1 : 1;
  return a.def.name < b.def.name ? -1 : a.def.name > b.def.name ? 1 : 0;
}
