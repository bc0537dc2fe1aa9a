// Webhook subscriptions, operator data (docs/events.md §Webhooks): added, listed, removed, tested
// and replayed from the command line. Secrets are shown once, when a subscription is added.
import { randomBytes } from 'node:crypto';
import { eventTypes, TEST_EVENT_TYPE } from '../changes/event-types.ts';
import { type Executor, write } from '../db/index.ts';
import { listObjectTypes } from '../definitions/object-types.ts';
import { type Ctx, operatorCtx } from '../lib/context.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { workspaceExists } from '../workspaces/repository.ts';
import * as repo from './repository.ts';
import { type Attempt, checkUrl, deliver, TargetError } from './sender.ts';

/**
 * Refuses a name that is no event type the workspace's events are written with (docs/events.md
 * §Webhooks): a type it does not have (`contacts.created`, `project.created` before `project` is
 * defined) or an action its type never goes through (`task.merged`: tasks are never merged) would
 * never be written, and the endpoint would wait for it in silence. The message names the type,
 * why, and every type the subscription may take.
 */
async function checkEventTypes(ctx: Ctx, types: readonly string[]): Promise<void> {
  let known: readonly string[] | undefined;
  for (const t of types) {
    known ??= eventTypes((await listObjectTypes(ctx)).map((o) => o.objectType));
    if (known.includes(t)) continue;
    throw new InputError(
      `"${t}" is not an event type: ${whyNot(t, known)}. The event types of this workspace: ${known.join(', ')} (docs/events.md §Types)`,
      'events',
    );
  }
}

/** Why `t` is not among `known`, the workspace's event types. */
function whyNot(t: string, known: readonly string[]): string {
  if (t === TEST_EVENT_TYPE) return '`rolodex webhook test` sends it to the webhook it tests, whatever that takes';
  const dot = t.lastIndexOf('.');
  if (dot <= 0) return 'an event type is <type>.<action>';
  const type = t.slice(0, dot);
  const ofType = known.filter((k) => k.startsWith(`${type}.`));
  if (ofType.length === 0) return `the workspace has no type "${type}"`;
  return `no ${type} event is "${t.slice(dot + 1)}" (those of ${type} are ${ofType.join(', ')})`;
}

export interface AddWebhookInput {
  url: string;
  /** The event types it takes; 'all' for every one. */
  events: readonly string[] | 'all';
  description?: string | null;
  allowPrivate: boolean;
}

function describe(row: repo.SubscriptionRow, types: readonly string[] | undefined, written: readonly string[] = []) {
  const events = row.all_events === 1 ? ('all' as const) : (types ?? []);
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    url: row.url,
    description: row.description,
    events,
    /** The types it names that no event is written with (docs/events.md §Webhooks): it never receives them. */
    neverWritten: events === 'all' ? [] : events.filter((t) => !written.includes(t)),
    createdAt: row.created_at,
    status: row.disabled_at ? ('disabled' as const) : row.failing_since ? ('failing' as const) : ('active' as const),
    failingSince: row.failing_since,
    disabledAt: row.disabled_at,
    lastError: row.last_error,
  };
}

export type Subscription = ReturnType<typeof describe>;

export async function addWebhook(ctx: Ctx, input: AddWebhookInput): Promise<Subscription & { secret: string }> {
  // The URL as it is parsed and called (white space around it, and tabs and line breaks in it, left
  // out): what `list` shows is the address deliveries go to.
  let url: string;
  try {
    url = checkUrl(input.url, input.allowPrivate).href;
  } catch (err) {
    if (err instanceof TargetError) throw new InputError(err.message, 'url');
    throw err;
  }
  const types = input.events === 'all' ? [] : [...new Set(input.events)];
  if (input.events !== 'all' && types.length === 0) throw new InputError('name the event types (--events a,b) or take them all (--all)', 'events');
  if (!(await workspaceExists(ctx.db, ctx.actor.workspaceId))) throw new InputError(`no workspace "${ctx.actor.workspaceId}"`, 'workspace');
  await checkEventTypes(ctx, types);
  const row: repo.SubscriptionRow = {
    id: newId('whk', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    url,
    description: input.description ?? null,
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    all_events: input.events === 'all' ? 1 : 0,
    created_at: isoNow(ctx.now),
    failing_since: null,
    last_error: null,
    disabled_at: null,
  };
  await repo.insertSubscription(ctx.db, row, types);
  // Its types were checked above: every one is written.
  return { ...describe(row, types, types), secret: row.secret };
}

export async function listWebhooks(db: Executor, input: { workspaceId?: string }): Promise<Subscription[]> {
  // A workspace named is one that exists: a mistyped id is refused, not answered with no webhooks.
  if (input.workspaceId !== undefined && !(await workspaceExists(db, input.workspaceId)))
    throw new InputError(`no workspace "${input.workspaceId}"`, 'workspace');
  const rows = await repo.listSubscriptions(db, input.workspaceId);
  const types = await repo.subscriptionTypes(
    db,
    rows.map((r) => r.id),
  );
  // A subscription stored before `add` checked its types may name one no event is written with
  // (`task.merged`): checked against its workspace's event types, read once per workspace.
  const written = new Map<string, string[]>();
  for (const r of rows) {
    if (!types.has(r.id) || written.has(r.workspace_id)) continue;
    written.set(r.workspace_id, eventTypes((await listObjectTypes(operatorCtx(db, r.workspace_id))).map((o) => o.objectType)));
  }
  return rows.map((r) => describe(r, types.get(r.id), written.get(r.workspace_id)));
}

async function requireSubscription(db: Executor, id: string): Promise<repo.SubscriptionRow> {
  const row = await repo.findSubscription(db, id);
  if (!row) throw new InputError(`no webhook "${id}"`, 'id');
  return row;
}

export async function removeWebhook(db: Executor, input: { id: string }): Promise<void> {
  await requireSubscription(db, input.id);
  await repo.deleteSubscription(db, input.id);
}

/** Sends one `webhook.test` event now, signed as every delivery is; nothing is stored. */
export async function testWebhook(
  db: Executor,
  input: { id: string; now: number; timeoutMs: number; allowPrivate: boolean },
): Promise<Attempt & { eventId: string }> {
  const row = await requireSubscription(db, input.id);
  const event = {
    id: newId('evt', input.now),
    type: TEST_EVENT_TYPE,
    occurredAt: isoNow(input.now),
    workspaceId: row.workspace_id,
    actor: { type: 'operator', id: null },
    data: { object: { id: row.id, url: row.url, description: row.description } },
  };
  const attempt = await deliver({
    url: row.url,
    secret: row.secret,
    eventId: event.id,
    body: JSON.stringify(event),
    timeoutMs: input.timeoutMs,
    allowPrivate: input.allowPrivate,
  });
  return { ...attempt, eventId: event.id };
}

/**
 * Queues again every stored event of the subscription's workspace from `since` on that it takes
 * (each with its own webhook-id, as first sent); a disabled subscription is enabled again, its
 * failing streak afresh, and a failing one stays failing since when it was (docs/events.md
 * §Webhooks). Returns how many were queued (events already queued for it are not queued twice).
 */
export async function replayWebhook(db: Executor, input: { id: string; since: string }): Promise<number> {
  // A date-time with a time zone, as every date the API and the import take (docs/errors.md
  // §Dates): Date.parse also reads "March 1" (the year 2001), "1" or a date without a zone (local
  // time), each an instant other than the one meant, and replays a span nobody asked for.
  const ms = parseIsoDateTime(input.since);
  if (Number.isNaN(ms)) throw new InputError(`"${input.since}" is not a date-time with a time zone (ISO 8601, e.g. 2026-03-01T00:00:00Z)`, 'since');
  const since = new Date(ms).toISOString();
  await requireSubscription(db, input.id);
  return write(db, async (tx) => {
    await repo.enableSubscription(tx, input.id);
    return repo.queueReplay(tx, input.id, since);
  });
}
