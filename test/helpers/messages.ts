// Fixtures for the message tests: a workspace with users and keys of every kind, and an importer.
import { randomBytes } from 'node:crypto';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createUser } from '../../src/users/service.ts';
import type { Executor } from '../../src/db/types.ts';
import { keyFor, type TestApp } from './app.ts';
import { systemCtx, operatorCtx } from '../../src/lib/context.ts';

export function importObjects(t: TestApp, workspaceId: string, objects: Array<Record<string, unknown>>) {
  return runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: objects.map((o) => JSON.stringify(o)).join('\n') });
}

export interface Caller {
  name: string;
  secret: string;
  /** null for the workspace key */
  userExt: string | null;
}

/** alice and bob are members, carol an admin; each with a key, plus a workspace key. */
export async function seedPeople(t: TestApp) {
  const db = t.deps.db.kysely;
  const ws = await createWorkspace(systemCtx(db), { name: 'Messages test' });
  const tag = randomBytes(4).toString('hex');
  const users: Record<string, string> = {};
  const callers: Caller[] = [];
  for (const [name, role] of [
    ['alice', 'member'],
    ['bob', 'member'],
    ['carol', 'admin'],
  ] as const) {
    const u = await createUser(operatorCtx(db, ws.id), { email: `${name}-${tag}@example.test`, role, externalId: `u-${name}` });
    users[name] = u.id;
    callers.push({ name, secret: await keyFor(t, ws.id, u.id, ['messages:read']), userExt: `u-${name}` });
  }
  callers.push({ name: 'workspace', secret: await keyFor(t, ws.id, null, ['messages:read']), userExt: null });
  return { workspaceId: ws.id, users, callers };
}

export function message(externalId: string, channel: string, sentAt: string, text: string, extra: Record<string, unknown> = {}) {
  return {
    object: 'message',
    externalId,
    channel,
    fields: { $text: { value: text, valueType: 'TEXT' }, $sentAt: { value: sentAt, valueType: 'DATETIME' }, ...extra },
  };
}

/** docs/design.md §Message visibility, written out independently of the server's SQL. */
export function expectedAccess(caller: Caller, visibility: string, members: string[]): 'FULL' | 'METADATA' | null {
  if (caller.userExt !== null && members.includes(caller.userExt)) return 'FULL';
  return visibility === 'public' ? 'FULL' : visibility === 'restricted' ? 'METADATA' : null;
}

/**
 * Every message `userId` (null: a workspace key) may see, newest $sentAt first, ties by id: a full
 * scan of the workspace's messages, channels and memberships, filtered here by the rule of
 * docs/design.md §Message visibility (the server's SQL plays no part).
 */
export async function visibleByScan(db: Executor, workspaceId: string, userId: string | null): Promise<string[]> {
  const channels = new Map(
    (await db.selectFrom('channels').select(['id', 'visibility']).where('workspace_id', '=', workspaceId).execute()).map((c) => [c.id, c.visibility]),
  );
  const mine = new Set(
    userId === null ? [] : (await db.selectFrom('channel_members').select('channel_id').where('user_id', '=', userId).execute()).map((m) => m.channel_id),
  );
  const all = await db.selectFrom('messages').select(['id', 'sent_at', 'channel_id']).where('workspace_id', '=', workspaceId).execute();
  return all
    .filter((m) => channels.get(m.channel_id) !== 'private' || mine.has(m.channel_id))
    .sort((a, b) => (a.sent_at === b.sent_at ? (a.id < b.id ? 1 : -1) : a.sent_at < b.sent_at ? 1 : -1))
    .map((m) => m.id);
}
