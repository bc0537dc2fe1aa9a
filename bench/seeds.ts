// Seeds for bench/routes.ts: rows written in bulk through Kysely (the importer and the API are
// not what these routes measure), then the kept counters and ranked index the API relies on.
import { TASK_STATUSES } from '../src/definitions/catalogue.ts';
import type { Executor } from '../src/db/types.ts';
import { isoNow, newId } from '../src/lib/ids.ts';
import { createList } from '../src/lists/service.ts';
import { rankRebuild } from '../src/db/rank/index.ts';
import { addMembers, insertList, LIST_MEMBERS, updateList } from '../src/lists/repository.ts';
import { MESSAGES } from '../src/messages/repository.ts';
import { RECORDS } from '../src/records/repository.ts';
import type { BenchContext } from './routes.ts';
import { RECORD_TYPES } from '../src/records/service.ts';
import { createRecord } from '../src/records/service.ts';
import { operatorCtx } from '../src/lib/context.ts';
import { write } from '../src/db/write.ts';

const BATCH = 500;

async function insertBatches<T>(db: Executor, table: string, rows: T[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH)
    await db
      .insertInto(table as never)
      .values(rows.slice(i, i + BATCH))
      .execute();
}

function contacts(workspaceId: string, n: number, now: number, tag: string) {
  const at = isoNow(now);
  return Array.from({ length: n }, (_, i) => ({
    id: newId('con', now - n + i),
    workspace_id: workspaceId,
    kind: 'contact' as const,
    external_id: `${tag}-${i}`,
    fields: JSON.stringify({
      $name: { firstName: `First${i}`, lastName: 'Bench' },
      $email: [`c${i}@bench.test`],
    }),
    created_at: at,
    updated_at: at,
  }));
}

/** A contact list with 10 members: for GET /v1/lists/{id}. */
export async function seedList(ctx: BenchContext): Promise<void> {
  const now = Date.now();
  const rows = contacts(ctx.workspaceId, 10, now, 'small');
  await insertBatches(ctx.db.kysely, 'records', rows);
  // Written straight into the table: the ranked listing of contacts is counted from it.
  await write(ctx.db.kysely, (tx) => rankRebuild(tx, RECORDS, [ctx.workspaceId, 'contact']));
  const list = await write(ctx.db.kysely, (tx) =>
    createList(operatorCtx(tx, ctx.workspaceId, { now }), {
      fields: { $name: 'Bench list', $objectType: 'contact' },
      relationships: { $contacts: rows.map((r) => r.id) },
    }),
  );
  ctx.state.listId = list.id;
}

/** `n` empty contact lists, created as the API creates them; their ids in `ctx.state.listIds`. */
export async function seedLists(ctx: BenchContext, n: number): Promise<void> {
  const ids: string[] = [];
  await write(ctx.db.kysely, async (tx) => {
    for (let i = 0; i < n; i++) ids.push((await createList(operatorCtx(tx, ctx.workspaceId), { fields: { $name: `List ${i}`, $objectType: 'contact' } })).id);
  });
  ctx.state.listIds = ids;
}

/** A contact list of `n` members (100,000 by default): for a member page deep in the list. */
export async function seedBigList(ctx: BenchContext, n = Number(process.env.BENCH_LIST_MEMBERS ?? 100_000)): Promise<void> {
  const now = Date.now();
  const rows = contacts(ctx.workspaceId, n, now, 'big');
  const listId = newId('lst', now);
  await write(ctx.db.kysely, async (tx) => {
    await insertBatches(tx, 'records', rows);
    await tx
      .insertInto('lists')
      .values({
        id: listId,
        workspace_id: ctx.workspaceId,
        name: 'Big list',
        object_type: 'contact',
        member_count: n,
        created_at: isoNow(now),
        updated_at: isoNow(now),
      })
      .execute();
    await insertBatches(
      tx,
      'list_members',
      rows.map((r, i) => ({ list_id: listId, entity_id: r.id, added_at: isoNow(now - n + i) })),
    );
    await rankRebuild(tx, LIST_MEMBERS, [listId]);
    await rankRebuild(tx, RECORDS, [ctx.workspaceId, 'contact']);
  });
  ctx.state.bigListId = listId;
  ctx.state.bigListMembers = n;
}

/** Channels of every visibility with `n` messages (50,000 by default): for GET /v1/messages. */
export async function seedMessages(ctx: BenchContext, n = Number(process.env.BENCH_MESSAGES ?? 50_000)): Promise<void> {
  const now = Date.now();
  const at = isoNow(now);
  const visibilities = ['public', 'restricted', 'private'] as const;
  const channels = Array.from({ length: 30 }, (_, i) => ({
    id: newId('chn', now + i),
    workspace_id: ctx.workspaceId,
    external_id: null,
    provider: 'slack',
    name: `bench-${i}`,
    visibility: visibilities[i % 3] as (typeof visibilities)[number],
    message_count: 0,
    created_at: at,
    updated_at: at,
  }));
  const messages = Array.from({ length: n }, (_, i) => {
    const ch = channels[i % channels.length] as (typeof channels)[number];
    ch.message_count++;
    return {
      id: newId('msg', now - n + i),
      workspace_id: ctx.workspaceId,
      channel_id: ch.id,
      channel_visibility: ch.visibility,
      external_id: null,
      sent_at: isoNow(now - n * 1000 + i * 1000),
      edited_at: null,
      provider: 'slack',
      provider_thread_id: null,
      text_type: 'TEXT' as const,
      created_at: at,
      updated_at: at,
    };
  });
  await write(ctx.db.kysely, async (tx) => {
    await insertBatches(tx, 'channels', channels);
    await insertBatches(
      tx,
      'channel_members',
      channels.filter((_, i) => i % 5 === 0).map((c) => ({ channel_id: c.id, user_id: ctx.userId, created_at: at })),
    );
    await insertBatches(tx, 'messages', messages);
    await insertBatches(
      tx,
      'message_texts',
      messages.map((m, i) => ({ message_id: m.id, text: `bench message ${i}` })),
    );
    // Written straight into the tables: the ranked index pages are read from is counted from them.
    await rankRebuild(tx, MESSAGES, [ctx.workspaceId]);
  });
}

/** One contact created through the record API's service, linked to an account: for GET /v1/contacts/{id}. */
export async function seedContact(ctx: BenchContext): Promise<void> {
  const id = await write(ctx.db.kysely, async (tx) => {
    const op = operatorCtx(tx, ctx.workspaceId);
    const account = await createRecord(op, { type: RECORD_TYPES.account, fields: { $name: 'Bench account' } });
    const contact = await createRecord(op, {
      type: RECORD_TYPES.contact,
      fields: { $name: { firstName: 'Bench', lastName: 'Contact' }, $email: ['bench@contact.test'] },
      relationships: { $account: account.id },
    });
    return contact.id;
  });
  ctx.state.contactId = id;
}

/** `n` contacts of one account, created as the API creates them; their ids in `ctx.state.contactIds`. */
export async function seedContacts(ctx: BenchContext, n: number): Promise<void> {
  ctx.state.contactIds = await write(ctx.db.kysely, async (tx) => {
    const op = operatorCtx(tx, ctx.workspaceId);
    const account = await createRecord(op, { type: RECORD_TYPES.account, fields: { $name: 'Bench account' } });
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const fields = { $name: { firstName: 'Bench', lastName: `Contact ${i}` }, $email: [`bench.${i}@contact.test`] };
      ids.push((await createRecord(op, { type: RECORD_TYPES.contact, fields, relationships: { $account: account.id } })).id);
    }
    return ids;
  });
}

/** `n` tasks created through the service, assigned to the bench user, their statuses in turn. */
export async function seedTasks(ctx: BenchContext, n: number): Promise<void> {
  ctx.state.taskIds = await write(ctx.db.kysely, async (tx) => {
    const op = operatorCtx(tx, ctx.workspaceId);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const fields = { $title: `Task ${i}`, $status: TASK_STATUSES[i % 4] };
      ids.push((await createRecord(op, { type: RECORD_TYPES.task, fields, relationships: { $assignedTo: ctx.userId } })).id);
    }
    return ids;
  });
}

/** `n` contacts written directly, their ids one millisecond apart from `T0`, oldest first; 10,000 per transaction. */
export async function seedRankedContacts(db: Executor, workspaceId: string, n: number, T0: number): Promise<string[]> {
  const rows = contacts(workspaceId, n, T0 + n, 'c');
  for (let i = 0; i < n; i += 10_000) await write(db, (tx) => insertBatches(tx, 'records', rows.slice(i, i + 10_000)));
  return rows.map((r) => r.id);
}

/** A list of the first `n` contacts, 1,000 per transaction, each batch joining 1 ms after the last. */
export async function seedMemberList(db: Executor, workspaceId: string, contacts: string[], n: number, T0: number): Promise<string> {
  const id = newId('lst', T0);
  await write(db, (tx) =>
    insertList(tx, {
      id,
      workspace_id: workspaceId,
      external_id: null,
      name: `${n}`,
      object_type: 'contact',
      member_count: 0,
      created_at: isoNow(T0),
      updated_at: isoNow(T0),
    }),
  );
  for (let i = 0; i < n; i += 1000) {
    const at = isoNow(T0 + 1 + i / 1000);
    await write(db, async (tx) => {
      const added = await addMembers(tx, id, contacts.slice(i, Math.min(n, i + 1000)), at);
      await updateList(tx, id, { delta: added.length, at });
    });
  }
  return id;
}
