// Filtered record listings (docs/filtering.md §Plans): the records of a type that satisfy every
// filter, newest first by createdAt (ties by id), with an exact totalCount counted through the
// filters' indexes, never by reading every record of the workspace.
import type { TypeDefinitions } from '../../definitions/service.ts';
import type { Ctx } from '../../lib/context.ts';
import type { Page } from '../../lib/paging.ts';
import { pageByValue, pageWithoutValues, rankedFields } from '../index/facets.ts';
import { trigrams } from '../index/trigrams.ts';
import { pageRecordIds } from '../repository.ts';
import { type Filter, parseFilters } from './parse.ts';
import * as repo from './repository.ts';
import type { Atom, FilterPlan, TypeInWorkspace, ValueCond } from './repository.ts';

export { parseFilters, type Filter } from './parse.ts';
export type { FilterPlan } from './repository.ts';

/** Index reads of one estimate stop after this many rows: enough to tell a selective filter. */
const ESTIMATE_CAP = 2000;
/**
 * When every probed trigram of a needle reaches the cap, they are counted again with the cap this
 * many times higher, up to ESTIMATE_CAP × RECOUNT_MAX: each round stops as soon as one of them is
 * under its cap, so that finding a rarest trigram of 5,000 postings counts each probe up to 8,000,
 * not 32,000.
 */
const RECOUNT_STEP = 4;
const RECOUNT_MAX = 16;
/** A long `contains` needle has its rarest trigram looked for among this many. */
const TRIGRAM_PROBES = 8;

interface Planned {
  atom: Atom;
  negate: boolean;
}

/** Where each numeric operator goes in a range (ValueCond `num`). */
const NUM_KEYS = { equal: 'eq', greaterThan: 'gt', greaterThanOrEqual: 'ge', lessThan: 'lt', lessThanOrEqual: 'le' } as const;

/** Filters as atoms: positive ranges of one field merge into one index range. */
function atoms(defs: TypeDefinitions, filters: readonly Filter[]): Planned[] {
  const out: Planned[] = [];
  const ranges = new Map<string, Extract<Atom, { kind: 'values' }>>();
  for (const f of filters) {
    if (f.kind === 'relationship') {
      const s = f.relationship.storage;
      const atom: Atom =
        s.kind === 'inverse' ? { kind: 'inverse', name: s.key, sourceType: s.objectType, id: f.id } : { kind: 'own', name: f.relationship.key, id: f.id };
      out.push({ atom, negate: f.negate });
      continue;
    }
    const def = defs.fields.get(f.field)!;
    // A field has several rows per record when it holds an array, is an ADDRESS (one per part) or
    // an EMAIL (an internationalized domain in both spellings, docs/records.md §E-mail addresses).
    const multiRow = def.multipleValues || def.valueType === 'ADDRESS' || def.valueType === 'EMAIL';
    if (f.kind === 'text') {
      const cond: ValueCond =
        f.op === 'set' ? { op: 'set' } : f.op === 'contains' && def.valueType === 'EMAIL' ? addressPart(f.value) : { op: f.op, text: f.value };
      out.push({ atom: { kind: 'values', field: f.field, multiRow, cond }, negate: f.negate });
      continue;
    }
    const key = NUM_KEYS[f.op];
    // Numbers, currencies, checkboxes and DATETIMEs hold one value, so bounds of one field can be
    // one range. Negated ones stay apart: "not above 10 and not below 5" is not one range.
    const merged = f.negate ? undefined : ranges.get(f.field);
    if (merged && merged.cond.op === 'num' && merged.cond[key] === undefined) {
      merged.cond[key] = f.value;
      continue;
    }
    const atom = { kind: 'values' as const, field: f.field, multiRow, cond: { op: 'num' as const, [key]: f.value } };
    if (!f.negate) ranges.set(f.field, atom);
    out.push({ atom, negate: f.negate });
  }
  return out;
}

/**
 * An EMAIL `contains` value: a part of the address as written, or of the address written with its
 * domain's final dot (docs/filtering.md §Matching). A value ending in a dot is such a part of every
 * address whose key (without the dot) ends with the value's other characters: `acme.test.` finds
 * `ann@acme.test` as `ann@acme.test.`. A value holding white space takes no `end`: no key holds
 * one, and the row of an address as written ends with a space (docs/records.md §E-mail addresses),
 * which no part of the address is: a value ending in a space matches only before a row's end.
 */
function addressPart(text: string): ValueCond {
  if (text.endsWith(' ')) return { op: 'contains', text, inner: true };
  const end = text.slice(0, -1);
  return text.endsWith('.') && end !== '' && !/\s/u.test(text) ? { op: 'contains', text, end } : { op: 'contains', text };
}

/** A `contains` atom read through its rarest trigram (of a few spread over the needle). */
async function withTrigram(ctx: Ctx, s: TypeInWorkspace, a: Atom): Promise<Atom> {
  if (a.kind !== 'values' || a.cond.op !== 'contains') return a;
  // Every match holds the value without its final dot when the rooted form counts (`end`).
  const all = trigrams(a.cond.end ?? a.cond.text);
  if (all.length === 0) return a;
  const picks = spread(all, TRIGRAM_PROBES);
  // One statement for every probe: a round trip each would cost more than the probes.
  let best = picks[0]!;
  for (let cap = ESTIMATE_CAP; cap <= ESTIMATE_CAP * RECOUNT_MAX; cap *= RECOUNT_STEP) {
    // While every probe reaches the cap, which is rarest is still unknown, and the first one could
    // hold every record of the field: they are counted again further.
    const counts = await repo.trigramCounts(ctx.db, s, a.field, picks, cap);
    for (const t of picks) if (counts.get(t)! < counts.get(best)!) best = t;
    if (counts.get(best)! < cap) break;
  }
  return { ...a, trigram: best };
}

/** At most `k` of `xs`, evenly spread from the first to the last. */
export function spread<T>(xs: readonly T[], k: number): T[] {
  if (xs.length <= k) return [...xs];
  return Array.from({ length: k }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (k - 1))]!);
}

const needsTypeCheck = (a: Atom) => a.kind !== 'values';

/** How a filtered page is read (docs/filtering.md §Plans); filteredPage runs it, bench/filters.ts explains it. */
export async function planFilters(ctx: Ctx, input: { defs: TypeDefinitions; filters: readonly Filter[]; page: Page }): Promise<FilterPlan> {
  const { defs, filters, page } = input;
  const s: TypeInWorkspace = { workspaceId: ctx.actor.workspaceId, objectType: defs.objectType };
  const planned = atoms(defs, filters);
  const positives = await Promise.all(planned.filter((p) => !p.negate).map((p) => withTrigram(ctx, s, p.atom)));
  const negatives = planned.filter((p) => p.negate).map((p) => p.atom);

  if (positives.length === 0) {
    // Negation only: the negated filters' matches are read through their own indexes to be counted.
    const drivers = await Promise.all(negatives.map((a) => withTrigram(ctx, s, a)));
    return repo.negatedPlan(ctx.db, s, negatives, drivers, page);
  }

  // The most selective positive filter drives (its index range read once); the others and the
  // negated ones are probed per candidate by record id.
  let driverAt = 0;
  if (positives.length > 1) {
    const sizes = await Promise.all(positives.map((a) => repo.driverCount(ctx.db, s, a, ESTIMATE_CAP)));
    driverAt = sizes.indexOf(Math.min(...sizes));
  }
  const driver = positives[driverAt]!;
  const checks = positives.filter((_, i) => i !== driverAt);
  // A driver of the value index is already of this type; with nothing else to check, counting
  // its index range is the count. (A `contains` driver checks its candidates, so it is not one.)
  const alone = checks.length === 0 && negatives.length === 0 && !needsTypeCheck(driver) && !(driver.kind === 'values' && driver.cond.op === 'contains');
  return repo.drivenPlan(ctx.db, s, { driver, checks, negatives, page, alone });
}

/** A walk reads this many times the rows it expects to need, plus two pages, before sorting instead. */
const WALK_SLACK = 4;

/**
 * How many of the newest records a page walks, or null when sorting the matches is shorter.
 * Matches spread over the listing put offset + limit of them among the newest
 * (offset + limit) × all / matches records. Walking those costs a probe each; sorting every match
 * costs a lookup each: the walk wins when it is the shorter, and is bounded so that a filter whose
 * matches are all old costs at most a few times the expected walk before the sort.
 */
export function walkRows(page: Page, matches: number, all: number): number | null {
  const expected = ((page.offset + page.limit) * all) / matches;
  return expected < matches ? Math.min(all, Math.ceil(WALK_SLACK * expected) + 2 * page.limit) : null;
}

/**
 * A query answered by the ranked sets of one field alone (docs/filtering.md §Ranked values): one
 * `equal` (the value's set), or only negated `equal`s of one single-valued field (the listing
 * without their sets).
 */
function rankedValue(defs: TypeDefinitions, filters: readonly Filter[]): { field: string; values: string[]; negate: boolean } | undefined {
  const [f] = filters;
  if (f?.kind !== 'text' || !rankedFields(defs).has(f.field)) return undefined;
  const same = filters.every((g) => g.kind === 'text' && g.op === 'equal' && g.field === f.field && g.negate === f.negate);
  if (!same || (!f.negate && filters.length > 1) || (f.negate && defs.fields.get(f.field)?.multipleValues === true)) return undefined;
  return { field: f.field, values: filters.map((g) => (g as typeof f).value), negate: f.negate };
}

/** One page of the records of `defs.objectType` that satisfy every filter, and how many do. */
export async function filteredPage(
  ctx: Ctx,
  input: { defs: TypeDefinitions; filters: readonly Filter[]; page: Page },
): Promise<{ totalCount: number; ids: string[] }> {
  const { page } = input;
  const ranked = rankedValue(input.defs, input.filters);
  const { workspaceId } = ctx.actor;
  if (ranked?.negate) return pageWithoutValues(ctx.db, workspaceId, input.defs.objectType, ranked.field, ranked.values, page);
  if (ranked) return pageByValue(ctx.db, workspaceId, input.defs.objectType, ranked.field, ranked.values[0]!, page);
  const plan = await planFilters(ctx, input);
  const total = async () => (await pageRecordIds(ctx.db, ctx.actor.workspaceId, input.defs.objectType, { offset: 0, limit: 1 })).total;
  if (plan.kind === 'negated') {
    const [pageIds, n, all] = await Promise.all([repo.ids(ctx.db, plan.page), plan.excluded ? repo.count(ctx.db, plan.excluded) : 0, total()]);
    return { totalCount: all - n, ids: pageIds };
  }
  if (plan.indexCount) {
    const [matches, all] = await Promise.all([repo.count(ctx.db, plan.indexCount), total()]);
    if (matches === 0 || page.offset >= matches) return { totalCount: matches, ids: [] };
    const rows = walkRows(page, matches, all);
    if (rows !== null) {
      const walked = await repo.ids(ctx.db, plan.walk(rows));
      if (walked.length === Math.min(page.limit, matches - page.offset) || rows >= all) return { totalCount: matches, ids: walked };
    }
    return { totalCount: matches, ids: (await repo.counted(ctx.db, plan.sorted)).ids };
  }
  const got = await repo.counted(ctx.db, plan.sorted);
  if (got.n !== null) return { totalCount: got.n, ids: got.ids };
  // A page past the last match has no row to carry the count.
  return { totalCount: page.offset === 0 ? 0 : await repo.count(ctx.db, plan.count), ids: [] };
}

/**
 * What a listing route calls with its whole validated query string: the filters of `query`
 * (every key besides limit and offset) read against `defs`, then one page of the matches.
 * Throws invalid_parameter naming the offending key.
 */
export async function filterQuery(
  ctx: Ctx,
  input: { defs: TypeDefinitions; query: Readonly<Record<string, unknown>>; page: Page },
): Promise<{ totalCount: number; ids: string[] }> {
  return filteredPage(ctx, { defs: input.defs, filters: parseFilters(input.query, input.defs), page: input.page });
}
