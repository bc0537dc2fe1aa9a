// `rolodex webhook …`: outbound webhook subscriptions (docs/events.md §Webhooks). The signing
// secret is printed once, by `add`.
import { loadConfig } from '../config.ts';
import { parseIsoDateTime } from '../lib/dates.ts';
import { InputError } from '../lib/errors.ts';
import { addWebhook, listWebhooks, removeWebhook, replayWebhook, type Subscription, testWebhook } from '../webhooks/service.ts';
import {
  badValue,
  countOf,
  description,
  type Io,
  onlyOptionsOf,
  operator,
  parse,
  print,
  printable,
  required,
  subcommand,
  takes,
  UsageError,
  withDb,
} from './io.ts';

export const usage = `rolodex webhook add --workspace W --url URL (--events a,b | --all) [--description D] [--json]
rolodex webhook list [--workspace W] [--json]
rolodex webhook remove WEBHOOK_ID [--json]
rolodex webhook test WEBHOOK_ID [--json]
rolodex webhook replay WEBHOOK_ID --since TIME [--json]   (TIME: 2026-03-01T00:00:00Z)
  (events: contact.created, list.members_added, …; add prints the whsec_ signing secret once; replay re-sends stored events and enables a disabled endpoint)`;

const line = (w: Subscription) =>
  `${w.id}  ${printable(w.url)}  ${w.status}${w.disabledAt ? ` since ${w.disabledAt}` : w.failingSince ? ` since ${w.failingSince}` : ''}  events ${
    w.events === 'all' ? 'all' : w.events.join(',')
  }${w.neverWritten.length > 0 ? `  never written: ${w.neverWritten.join(',')}` : ''}${w.description ? `  (${printable(w.description)})` : ''}${
    w.lastError && w.status !== 'active' ? `  last error ${printable(w.lastError)}` : ''
  }`;

function id(positionals: string[], what: string): string {
  const value = positionals[0];
  if (!value) throw new UsageError(`the id of the webhook to ${what} is required`);
  return value;
}

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['add', 'list', 'remove', 'test', 'replay']);
  const { values, positionals } = parse(
    rest,
    {
      workspace: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      all: { type: 'boolean' },
      description: { type: 'string' },
      since: { type: 'string' },
    },
    takes(sub, { add: 0, list: 0, remove: 1, test: 1, replay: 1 }),
  );
  onlyOptionsOf(usage, sub, values);
  const json = values.json as boolean | undefined;
  const allowPrivate = loadConfig(io.env).webhooks.allowPrivate;
  if (sub === 'add') {
    const workspaceId = required(values, 'workspace');
    const url = required(values, 'url');
    const events =
      values.all === true
        ? 'all'
        : ((values.events as string | undefined) ?? '')
            .split(',')
            .map((e) => e.trim())
            .filter(Boolean);
    if (values.all === true && values.events !== undefined) throw new UsageError('give --events or --all, not both');
    const w = await withDb(io, (db, config) =>
      addWebhook(operator(db, config, workspaceId), { url, events, description: description(values) ?? null, allowPrivate }),
    );
    print(io, json, w, `added webhook ${line(w)}\nsigning secret (shown once): ${w.secret}`);
  } else if (sub === 'list') {
    const workspaceId = values.workspace as string | undefined;
    const all = await withDb(io, (db) => listWebhooks(db.kysely, workspaceId === undefined ? {} : { workspaceId }));
    print(io, json, all, all.map(line).join('\n') || 'no webhooks');
  } else if (sub === 'remove') {
    const webhookId = id(positionals, 'remove');
    await withDb(io, (db) => removeWebhook(db.kysely, { id: webhookId }));
    print(io, json, { id: webhookId, removed: true }, `removed webhook ${webhookId}`);
  } else if (sub === 'test') {
    const webhookId = id(positionals, 'test');
    const r = await withDb(io, (db, config) =>
      testWebhook(db.kysely, { id: webhookId, now: Date.now(), timeoutMs: config.webhooks.timeoutMs, allowPrivate: config.webhooks.allowPrivate }),
    );
    // A failed delivery is a failed command: exit code 1 with the reason on stderr (docs/cli.md),
    // and with --json the attempt on stdout still.
    if (r.ok || json) print(io, json, r, `webhook.test ${r.eventId} delivered (HTTP ${r.status})`);
    if (!r.ok) throw new InputError(`webhook.test ${r.eventId} failed: ${r.error}`);
  } else if (sub === 'replay') {
    const webhookId = id(positionals, 'replay');
    const since = required(values, 'since');
    // The form replayWebhook takes (docs/errors.md §Dates), checked before the database is opened.
    if (Number.isNaN(parseIsoDateTime(since))) throw badValue('since', since, 'a date-time with a time zone, ISO 8601 such as 2026-03-01T00:00:00Z');
    const n = await withDb(io, (db) => replayWebhook(db.kysely, { id: webhookId, since }));
    print(io, json, { id: webhookId, queued: n }, `queued ${countOf(n, 'event')} for ${webhookId}`);
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
