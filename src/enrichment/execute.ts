// One claimed run, from lookup to outcome (docs/enrichment.md §Runs). The lookups run outside any
// transaction and within the run's timeout; the writes then happen in one transaction that first
// checks the runner still holds the run, re-reads the record and writes only the targets that are
// still empty (or were named), each value checked by the records engine as an API write would be.
// Whatever the outcome, the write of the run's end appends its event (./outcome.ts).
import { type Executor, write } from '../db/index.ts';
import { operatorCtx } from '../lib/context.ts';
import { unrooted } from '../lib/email.ts';
import { isoNow } from '../lib/ids.ts';
import { RECORD_TYPES, requireDefinitions } from '../records/service.ts';
import { updateRecord } from '../records/service.ts';
import { checkFieldKeys, checkFieldValues } from '../records/write-fields.ts';
import { emailDomain, type EnrichmentProvider, firstValue, type Subject } from './provider.ts';
import { appendRunsEnded, finishRun } from './outcome.ts';
import * as repo from './repository.ts';
import * as records from '../records/repository.ts';
import { findTrash } from '../trash/repository.ts';
import { ACCOUNT_LINK, isEmpty, loadSubject } from './service.ts';
import type { RunStatus } from './tables.ts';

export interface ExecuteEnv {
  providers: readonly EnrichmentProvider[];
  userAgent: string;
  allowPrivate: boolean;
  timeoutMs: number;
  /** Writes an outcome reached without a write to the record; true while the run was still held. Defaults to one statement per run. */
  finish?: (outcome: repo.Outcome) => Promise<boolean>;
}

export class RunTimedOut extends Error {
  override name = 'RunTimedOut';
}

/**
 * The oldest account of the workspace one of whose websites is on `domain`, ignoring `www.`: its
 * host is `domain` itself (unless that starts with `www.`, which the comparison strips) or
 * `www.` and `domain`.
 */
async function accountFor(db: Executor, workspaceId: string, domain: string): Promise<string | null> {
  // A domain is a host alone: anything a URL would read as a path, port or user is none.
  if (/[/?#@:\\\s]/.test(domain)) return null;
  let want: string;
  try {
    // The host the index would hold for a website on this domain (lower case, IDN as punycode,
    // without a final dot).
    want = unrooted(new URL(`https://${domain}`).hostname).replace(/^www\./, '');
  } catch {
    return null;
  }
  return repo.oldestAccountOnHosts(db, workspaceId, want.startsWith('www.') ? [`www.${want}`] : [want, `www.${want}`]);
}

/** Rejects when `signal` aborts, so that a lookup that ignores its signal still cannot outlast the run. */
function bounded<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new RunTimedOut('the run timed out'));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * Executes `row`, claimed under `token`; returns the outcome written, or null when the run was no
 * longer held (or was erased: its record was purged). `subject` is its record as the claim read it
 * (null: it is no longer live); read here when not given.
 */
export async function executeRun(db: Executor, row: repo.RunRow, token: string, env: ExecuteEnv, subject?: Subject | null): Promise<RunStatus | null> {
  const ws = row.workspace_id;
  const targets = JSON.parse(row.target_fields) as string[];
  const end = async (status: repo.Outcome['status'], error: string | null) =>
    (await (env.finish ? env.finish({ id: row.id, status, error }) : finishRun(db, token, { id: row.id, status, error }))) ? status : null;
  if (subject === undefined) subject = (await loadSubject(operatorCtx(db, ws), row.entity_type, row.entity_id)) ?? null;
  // A record that is no longer live has nothing to look up; its write tells a trashed one (the run
  // ends) from one purged for good (the run goes, docs/trash.md §Purge).
  if (!subject) return writeOutcome(db, row, token, {}, null);

  const signal = AbortSignal.timeout(env.timeoutMs);
  const found: Record<string, unknown> = {};
  let account: string | null = null;
  try {
    for (const p of env.providers) {
      const mine = p.fills(row.entity_type).filter((k) => targets.includes(k) && !(k in found));
      if (mine.length === 0 || !p.canLookUp(subject)) continue;
      Object.assign(found, await bounded(p.lookUp(subject, mine, { userAgent: env.userAgent, allowPrivate: env.allowPrivate, signal }), signal));
    }
    const domain = targets.includes(ACCOUNT_LINK) ? emailDomain(subject) : null;
    if (domain) account = await bounded(accountFor(db, ws, domain), signal);
  } catch (err) {
    if (signal.aborted || err instanceof RunTimedOut) return end('timed_out', 'timeout');
    return end('failed', err instanceof Error ? err.name : 'error');
  }
  return writeOutcome(db, row, token, found, account);
}

/**
 * Writes what the lookups of `row` found (`account`: the account a contact's run links it to) and
 * ends the run `completed`, with its event, in one transaction; null when `token` no longer holds
 * it. A record purged for good (neither live nor in the trash: the run was recorded from what was
 * read before the purge) takes nothing and its run is erased, with no event naming it.
 */
async function writeOutcome(db: Executor, row: repo.RunRow, token: string, found: Record<string, unknown>, account: string | null): Promise<RunStatus | null> {
  const ws = row.workspace_id;
  const named = new Set(JSON.parse(row.named_fields) as string[]);
  return write(db, async (tx) => {
    if (!(await repo.holds(tx, row.id, token))) return null;
    // One clock for the write: the record's updatedAt, the run's completedAt and its event's occurredAt.
    const now = Date.now();
    const ctx = operatorCtx(tx, ws, { now });
    const current = await loadSubject(ctx, row.entity_type, row.entity_id);
    if (current) {
      const defs = await requireDefinitions(ctx, row.entity_type);
      const fields: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(found)) {
        if (!named.has(key) && !isEmpty(current, key)) continue;
        const v = defs.fields.get(key)?.multipleValues ? [firstValue(value)] : value;
        try {
          checkFieldKeys(defs, { [key]: v });
          checkFieldValues(defs, { [key]: v });
          fields[key] = v;
        } catch {
          // A value the field does not take (a page's odd link) is left out, not the whole run.
        }
      }
      // An account moved to the trash (or purged) since the lookup found it is a link the record
      // cannot take: left out like a value. Read locked against deletion, so it stays live until
      // the write commits.
      const link =
        account !== null &&
        (named.has(ACCOUNT_LINK) || isEmpty(current, ACCOUNT_LINK)) &&
        !current.relationships.get(ACCOUNT_LINK)?.includes(account) &&
        (await records.existingRecords(tx, ws, 'account', [account])).has(account);
      if (Object.keys(fields).length > 0 || link)
        // A unique value another record holds is left out like any value the field does not take.
        await updateRecord(
          ctx,
          {
            type: RECORD_TYPES[row.entity_type],
            id: row.entity_id,
            fields,
            ...(link ? { relationships: { [ACCOUNT_LINK]: { add: [account] } } } : {}),
          },
          { omitTaken: true },
        );
    } else if (!(await findTrash(tx, ws, row.entity_id))) {
      // Read unlocked: a purge locks the entry and then the runs, and this write already holds its
      // run; locking the entry here would take the two in the other order.
      await repo.eraseRun(tx, row.id);
      return null;
    }
    const ended = await repo.finish(tx, row.id, token, 'completed', isoNow(now), null);
    if (ended) await appendRunsEnded(tx, [ended], now);
    return 'completed' as const;
  });
}
