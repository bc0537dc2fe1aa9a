// `rolodex trash list | restore | purge` (docs/trash.md): the operator's side of the trash. Each
// restore and the purge run in one transaction (a restore's followed by its listing's upkeep); after a purge on SQLite the write-ahead log is
// checkpointed and truncated, so that no copy of an erased value stays in it.
import type { Config } from '../config.ts';
import { type Db, statementJournalsInMemory, truncateLog, write } from '../db/index.ts';
import { AppError, InputError } from '../lib/errors.ts';
import type { Ctx } from '../lib/context.ts';
import { MAX_DURATION_DAYS, MAX_DURATION_MS } from '../lib/dates.ts';
import { RECORD_TYPES } from '../records/service.ts';
import { customTypes } from '../records/export.ts';
import { listTrash } from '../trash/repository.ts';
import { purge } from '../trash/purge.ts';
import { restore, type Restored } from '../trash/restore.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import { countOf, type Io, onlyOptionsOf, operator, parse, print, required, subcommand, takes, UsageError, withDb } from './io.ts';

export const usage = `rolodex trash list --workspace W [--type T] [--json]
rolodex trash restore --workspace W ID... [--json]
rolodex trash purge --workspace W [--older-than 30d] [ID...] [--json]`;

/** `30d`, `12h`, `90m` or a number of days → milliseconds. */
export function parseAge(text: string): number {
  const m = /^(\d+)([dhm]?)$/.exec(text.trim());
  if (!m) throw new UsageError(`--older-than takes a number of days (30d), hours (12h) or minutes (90m), not "${text}"`, 'older-than');
  const unit = m[2] === 'h' ? 3_600_000 : m[2] === 'm' ? 60_000 : 86_400_000;
  const ms = Number(m[1]) * unit;
  // Every entry is older than no time at all: the flag left out says that, so a zero is taken for
  // a slip (docs/cli.md, on durations).
  if (ms === 0) throw new UsageError(`--older-than must be more than zero, not "${text}" (without it, purge takes every entry)`, 'older-than');
  if (ms > MAX_DURATION_MS) throw new UsageError(`--older-than is at most ${MAX_DURATION_DAYS} days (100 years), not "${text}"`, 'older-than');
  return ms;
}

/** What the trash may hold: the workspace's record types (system, then custom), meetings and lists. */
async function trashTypes(ctx: Ctx): Promise<string[]> {
  return [...Object.keys(RECORD_TYPES), ...(await customTypes(ctx)), 'meeting', 'list'];
}

/** A refusal of the service as the operator's error: the code and the field it names. */
function asInput(err: unknown): never {
  if (err instanceof AppError) throw new InputError(`${err.code}: ${err.message}${err.param ? ` (${err.param})` : ''}`, err.param);
  throw err;
}

/**
 * A restore or purge is one transaction that changes nothing outside it (its follow-ups run after
 * COMMIT), so one that PostgreSQL cancels for a deadlock runs again, as an API write does
 * (docs/design.md §Database): a restore and a purge of linked entries lock them in opposite orders.
 */
function rerunOnConflict(io: Io): { rerun: (conflict: unknown) => void } {
  return { rerun: () => io.err('rolodex trash: cancelled by a conflict with another transaction; running it again') };
}

/**
 * Restores the entries `ids` of the workspace in the order given, each in a transaction of its own:
 * those restored before a refusal stay restored, and `shown` prints them before it is thrown.
 */
export async function restoreEach(
  db: Db,
  config: Config,
  workspaceId: string,
  ids: readonly string[],
  io: Io,
  shown: (done: Restored[]) => void,
): Promise<Restored[]> {
  await requireWorkspace(operator(db, config, workspaceId));
  // A restore writes what a create writes, its postings over many pages; SQLite keeps the journal
  // of each statement in memory, as the server does (docs/performance.md §Temporary tables of a
  // serving SQLite connection), not in a temporary file past 64 KiB.
  await statementJournalsInMemory(db.kysely);
  const out: Restored[] = [];
  // As an API write: the listing's counts are kept after COMMIT (src/trash/restore.ts), and
  // closing the database waits for that.
  const failed = (err: unknown) => io.err(`a follow-up of a committed restore failed: ${err instanceof Error ? err.message : String(err)}`);
  // An id named twice is one entry: restored once, not refused the second time as not in the trash.
  for (const id of new Set(ids)) {
    const r = await write(db.kysely, (tx) => restore({ ...operator(db, config, workspaceId), db: tx }, { id }), {
      followUpFailed: failed,
      ...rerunOnConflict(io),
    }).catch((err: unknown) => {
      if (out.length > 0) shown(out);
      return asInput(err);
    });
    out.push(r);
  }
  return out;
}

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['list', 'restore', 'purge']);
  const { values, positionals } = parse(
    rest,
    { workspace: { type: 'string' }, type: { type: 'string' }, 'older-than': { type: 'string' } },
    takes(sub, { list: 0, restore: Infinity, purge: Infinity }),
  );
  onlyOptionsOf(usage, sub, values);
  const workspaceId = required(values, 'workspace');
  const json = values.json as boolean;
  if (sub === 'list') {
    // An empty name is judged without the database: wrong usage, as a missing --workspace is.
    if (typeof values.type === 'string' && values.type.trim() === '') throw new UsageError('--type names a type (account, contact, …)', 'type');
    const rows = await withDb(io, async (db, config) => {
      const ctx = operator(db, config, workspaceId);
      await requireWorkspace(ctx);
      const type = values.type;
      if (typeof type !== 'string') return listTrash(ctx.db, workspaceId);
      const types = await trashTypes(ctx);
      // Only the database knows the workspace's types: refused, not wrong usage (docs/cli.md §The operator CLI).
      if (!types.includes(type)) throw new InputError(`--type: "${type}" is not a type of workspace ${workspaceId} (${types.join(', ')})`, 'type');
      return listTrash(ctx.db, workspaceId, { type });
    });
    const items = rows.map((r) => ({ id: r.id, objectType: r.object_type, deletedAt: r.deleted_at, mergedInto: r.merged_into }));
    const human = items.map((i) => `${i.id}  ${i.objectType}  deleted ${i.deletedAt}${i.mergedInto ? `  merged into ${i.mergedInto}` : ''}`).join('\n');
    return print(io, json, items, human || 'the trash is empty');
  }
  if (sub === 'restore') {
    if (positionals.length === 0) throw new UsageError('name at least one id to restore');
    const shown = (done: Restored[]) =>
      print(
        io,
        json,
        done,
        done
          .map((r) => `restored ${r.objectType} ${r.id} with ${r.members === undefined ? countOf(r.links, 'link') : countOf(r.members, 'member')}`)
          .join('\n'),
      );
    const done = await withDb(io, (db, config) => restoreEach(db, config, workspaceId, positionals, io, shown));
    return shown(done);
  }
  if (sub === 'purge') {
    const olderThan = typeof values['older-than'] === 'string' ? parseAge(values['older-than']) : undefined;
    if (olderThan !== undefined && positionals.length > 0) throw new UsageError('--older-than and ids exclude each other');
    const counts = await withDb(io, async (db, config) => {
      const ctx = operator(db, config, workspaceId);
      await requireWorkspace(ctx);
      const out = await write(
        db.kysely,
        (tx) => purge({ ...ctx, db: tx }, { ids: positionals, ...(olderThan === undefined ? {} : { olderThanMs: olderThan }) }),
        rerunOnConflict(io),
      ).catch(asInput);
      await truncateLog(db);
      return out;
    });
    const erased: [number, string][] = [
      [counts.values, 'field value'],
      [counts.valueIndexRows, 'value-index row'],
      [counts.relationships, 'relationship'],
      [counts.listMemberships, 'list membership'],
      [counts.storedResponses, 'stored response'],
      [counts.events, 'event'],
      [counts.historyRows, 'history row'],
      [counts.enrichmentRuns, 'enrichment run'],
    ];
    const human = `purged ${countOf(counts.records, 'record')}: ${erased.map(([n, what]) => countOf(n, what)).join(', ')}`;
    return print(io, json, counts, human);
  }
  throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
}
