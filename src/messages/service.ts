// Reading messages as a given caller (docs/design.md §Message visibility): what is invisible does
// not exist, METADATA withholds `$text` and `$files`. The text is never read from the database for
// a METADATA row.
import type { Config } from '../config.ts';
import type { Executor } from '../db/types.ts';
import { notFound } from '../lib/errors.ts';
import type { Page } from '../lib/paging.ts';
import { httpLink } from '../lib/links.ts';
import { type Caller, countVisible, filesOf, findOne, findPage, type MessageRow, type Strategy } from './repository.ts';

export type { Caller } from './repository.ts';

// Sorting every visible message costs about this many index steps of the newest-first walk.
const SORT_FACTOR = 4;

/**
 * The walk reads about (offset + limit) × total / visible index entries before it has the page;
 * gathering the visible channels' messages reads `visible` and sorts them. Pick the cheaper.
 */
export function chooseStrategy(page: Page, visible: number, total: number): Strategy {
  const walk = ((page.offset + page.limit) * total) / Math.max(visible, 1);
  return walk <= visible * SORT_FACTOR ? 'walk' : 'channels';
}

export async function listMessages(db: Executor, config: Config, caller: Caller, page: Page, strategy?: Strategy) {
  const { visible, total } = await countVisible(db, caller);
  if (page.offset >= visible) return { data: [], totalCount: visible };
  const rows = await findPage(db, caller, page.limit, page.offset, strategy ?? chooseStrategy(page, visible, total));
  return { data: await toResources(db, config, rows), totalCount: visible };
}

export async function getMessage(db: Executor, config: Config, caller: Caller, id: string) {
  const row = await findOne(db, caller, id);
  if (!row) throw notFound('message', id);
  return (await toResources(db, config, [row]))[0];
}

async function toResources(db: Executor, config: Config, rows: MessageRow[]) {
  const files = await filesOf(
    db,
    rows.filter((r) => r.access === 'FULL').map((r) => r.id),
  );
  return rows.map((r) => toResource(config, r, r.access === 'FULL' ? (files.get(r.id) ?? []) : []));
}

export function toResource(config: Config, r: MessageRow, files: string[]) {
  const full = r.access === 'FULL';
  return {
    id: r.id,
    accessLevel: r.access,
    createdAt: r.created_at,
    fields: {
      $text: { value: full ? r.text : null, valueType: r.text_type },
      $sentAt: { value: r.sent_at, valueType: 'DATETIME' },
      $provider: { value: r.provider, valueType: 'TEXT' },
      $providerThreadId: { value: r.provider_thread_id, valueType: 'TEXT' },
      $editedAt: { value: r.edited_at, valueType: 'DATETIME' },
    },
    httpLink: httpLink(config, 'messages', r.id),
    objectType: 'message' as const,
    relationships: {
      $channel: { cardinality: 'has_one' as const, objectType: 'channel', values: [r.channel_id] },
      $files: { cardinality: 'has_many' as const, objectType: 'file', values: files },
    },
    updatedAt: r.updated_at,
    externalId: r.external_id,
  };
}
