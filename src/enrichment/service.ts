// Enrichment runs (docs/enrichment.md): a request decides what a run would fill and whether it
// can, then queues it in the caller's transaction; the runner (src/jobs/enrichment.ts) executes it
// after the answer. With ENRICHMENT=on-create the runner also plans the runs of the records the API
// created, from the change log (./creation.ts). One run per record is in flight at a time.
import type { Executor } from '../db/index.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { requireDefinitions } from '../records/service.ts';
import * as records from '../records/repository.ts';
import type { RecordResource } from '../records/resource.ts';
import { emailDomain, type EnrichmentProvider, type RecordType, type Subject } from './provider.ts';
import * as repo from './repository.ts';

export interface EnrichmentEnv {
  mode: 'off' | 'manual' | 'on-create';
  providers: readonly EnrichmentProvider[];
}

/** The target a contact's run fills from its e-mail domain, without a provider. */
export const ACCOUNT_LINK = '$account';

export function toResource(row: repo.RunRow) {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    entityId: row.entity_id,
    entityType: row.entity_type,
    status: row.status,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    targetFields: JSON.parse(row.target_fields) as string[],
    trigger: row.trigger,
  };
}

export type RunResource = ReturnType<typeof toResource>;
export interface RunAnswer {
  enrichmentRun: RunResource | null;
  status: 'started' | 'already_running' | 'skipped';
  reason: 'no_targets' | 'no_operations' | null;
}

/** The stored record as providers see it; undefined when it does not exist in the workspace. */
export async function loadSubject(ctx: Ctx, entityType: RecordType, id: string): Promise<Subject | undefined> {
  const row = await records.findRecord(ctx.db, ctx.actor.workspaceId, entityType, id);
  if (!row) return undefined;
  const rels = (await records.ownRelationships(ctx.db, [id])).get(id) ?? new Map<string, string[]>();
  return { entityType, id, fields: JSON.parse(row.fields) as Record<string, unknown>, relationships: rels };
}

/**
 * The stored records of `runs` as providers see them, by record id, read together: a runner's
 * claim reads the rows and own relationships of the records of all the runs it takes in two
 * statements, whatever their workspaces and types, and nothing a provider does not see (a page's
 * read of records also gathers their inverse relationships). A record that no longer exists in its
 * run's workspace and type is absent.
 */
export async function loadSubjects(
  db: Executor,
  runs: readonly { workspace_id: string; entity_type: RecordType; entity_id: string }[],
): Promise<Map<string, Subject>> {
  const ids = runs.map((r) => r.entity_id);
  const [rows, rels] = await Promise.all([records.recordRows(db, ids), records.ownRelationships(db, ids)]);
  const out = new Map<string, Subject>();
  for (const r of runs) {
    const row = rows.get(r.entity_id);
    if (!row || row.workspace_id !== r.workspace_id || row.kind !== r.entity_type) continue;
    const fields = JSON.parse(row.fields) as Record<string, unknown>;
    out.set(row.id, { entityType: r.entity_type, id: row.id, fields, relationships: rels.get(row.id) ?? new Map<string, string[]>() });
  }
  return out;
}

/** Whether `key` holds nothing on the record. */
export function isEmpty(subject: Subject, key: string): boolean {
  if (key === ACCOUNT_LINK && subject.entityType === 'contact') return (subject.relationships.get(key) ?? []).length === 0;
  const v = subject.fields[key];
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

/**
 * The keys a run on this type can fill in this workspace: what a provider fills and the workspace
 * defines, writable and of a value type the provider fills it with.
 */
function fillable(env: EnrichmentEnv, defs: TypeDefinitions, entityType: RecordType): string[] {
  const keys = new Set<string>(entityType === 'contact' ? [ACCOUNT_LINK] : []);
  for (const p of env.providers)
    for (const k of p.fills(entityType)) {
      const def = defs.fields.get(k);
      if (def && !def.readOnly && (p.valueTypes?.[k]?.includes(def.valueType) ?? true)) keys.add(k);
    }
  return [...keys];
}

/**
 * Why a field a provider fills is still no target, when that is its value type: the types it is
 * filled as, so that the client sees what to change (docs/enrichment.md §What a run fills).
 */
function typeRefused(env: EnrichmentEnv, defs: TypeDefinitions, entityType: RecordType, key: string): string {
  const def = defs.fields.get(key);
  if (!def || def.readOnly) return '';
  const types = env.providers.filter((p) => p.fills(entityType).includes(key)).flatMap((p) => p.valueTypes?.[key] ?? []);
  return types.length === 0 ? '' : ` as a ${def.valueType} field (it is filled as ${[...new Set(types)].join(' or ')})`;
}

/** Whether some part of the run can look anything up for `targets`. */
function canOperate(env: EnrichmentEnv, subject: Subject, targets: readonly string[]): boolean {
  if (targets.includes(ACCOUNT_LINK) && emailDomain(subject) !== null) return true;
  return env.providers.some((p) => p.canLookUp(subject) && p.fills(subject.entityType).some((k) => targets.includes(k)));
}

const skipped = (reason: RunAnswer['reason']): RunAnswer => ({ enrichmentRun: null, status: 'skipped', reason });

/** The run `subject` would have, or why it has none; `named` the fields asked for by name. */
function planRun(
  ctx: Ctx,
  env: EnrichmentEnv,
  defs: TypeDefinitions,
  subject: Subject,
  input: { fields?: readonly string[] | undefined; trigger: 'creation' | 'manual' },
): repo.RunRow | RunAnswer {
  const can = fillable(env, defs, subject.entityType);
  // A name refused is named by its place in the array sent (docs/errors.md: `fields[2]`).
  for (const [i, key] of (input.fields ?? []).entries()) {
    if (!can.includes(key))
      throw new AppError(
        'invalid_value',
        `"${key}" is not a field enrichment fills on ${subject.entityType}s${typeRefused(env, defs, subject.entityType, key)}; it fills ${can.join(', ')}.`,
        {
          param: `fields[${i}]`,
        },
      );
  }
  const named = input.fields ? [...new Set(input.fields)] : null;
  // The name of an account is its own: replaced by the page's title only when asked by name.
  const targets = named ?? can.filter((k) => k !== '$name' && isEmpty(subject, k));
  if (env.mode === 'off') return skipped('no_operations');
  if (targets.length === 0) return skipped('no_targets');
  if (!canOperate(env, subject, targets)) return skipped('no_operations');
  const at = isoNow(ctx.now);
  return {
    id: newId('enr', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    entity_type: subject.entityType,
    entity_id: subject.id,
    status: 'queued',
    trigger: input.trigger,
    target_fields: JSON.stringify(targets),
    named_fields: JSON.stringify(named ?? []),
    created_at: at,
    updated_at: at,
    started_at: null,
    completed_at: null,
    due_at: at,
    lease_owner: null,
    attempts: 0,
    error: null,
  };
}

const isAnswer = (plan: repo.RunRow | RunAnswer): plan is RunAnswer => 'status' in plan && 'reason' in plan;

export async function requestRun(
  ctx: WriteCtx,
  env: EnrichmentEnv,
  input: { entityType: RecordType; entityId: string; fields?: readonly string[] | undefined; trigger: 'creation' | 'manual' },
): Promise<RunAnswer> {
  const subject = await loadSubject(ctx, input.entityType, input.entityId);
  if (!subject) throw notFound(input.entityType, input.entityId, 'entityId');
  const row = planRun(ctx, env, await requireDefinitions(ctx, input.entityType), subject, input);
  if (isAnswer(row)) return row;
  const inFlight = await repo.insertRun(ctx.db, row);
  return { enrichmentRun: toResource(inFlight), status: inFlight.id === row.id ? 'started' : 'already_running', reason: null };
}

/** A record as the API answered it (an event's `data.object`), as providers see it. */
export function subjectOf(entityType: RecordType, resource: RecordResource): Subject {
  const fields: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(resource.fields)) if (f.value !== null) fields[key] = f.value;
  const relationships = new Map(Object.entries(resource.relationships).map(([key, r]) => [key, r.values]));
  return { entityType, id: resource.id, fields, relationships };
}

/**
 * ENRICHMENT=on-create: the run of `subject`, a record created through the API as its
 * `<type>.created` event carries it, or null when it needs none. `id` is the run's id, drawn from
 * the event's, so that the run of one event is recorded once.
 */
export function planCreated(ctx: Ctx, env: EnrichmentEnv, defs: TypeDefinitions, subject: Subject, id: string): repo.RunRow | null {
  const row = planRun(ctx, env, defs, subject, { trigger: 'creation' });
  return isAnswer(row) ? null : { ...row, id };
}

export async function getRun(ctx: Ctx, input: { runId: string }): Promise<RunResource> {
  const row = await repo.findRun(ctx.db, ctx.actor.workspaceId, input.runId);
  if (!row) throw notFound('enrichment run', input.runId, 'runId');
  return toResource(row);
}
