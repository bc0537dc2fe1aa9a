// A workspace full of canary data: every kind of object the service holds, each carrying one
// unmistakable tag, so that a response can be searched for any byte of it. Seeded through the
// importer and the API, whichever the current build offers (records, lists and files arrive with
// their branches; what exists is seeded).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { createKey } from '../../src/auth/service.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createUser } from '../../src/users/service.ts';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField, addRelationship } from '../../src/definitions/service.ts';
import { call, headers, type TestApp } from './app.ts';
import { systemCtx, operatorCtx } from '../../src/lib/context.ts';
import { insertRun } from '../../src/enrichment/repository.ts';
import { newId } from '../../src/lib/ids.ts';

export interface Canary {
  tag: string;
  workspaceId: string;
  userId: string;
  /** Full-access user key. */
  secret: string;
  /**
   * Server ids by kind: list, message, channel, file, account, contact, opportunity, note, task,
   * user, objectType (a slug), customRecord; and by role: transcript, channelFile, spare…, merge….
   */
  ids: Record<string, string>;
  /** Capability URLs (paths) of the byte endpoints, when files exist. */
  uploadPath?: string;
  downloadPath?: string;
  /** The address of the owner's mailbox, when e-mail is served. */
  mailbox?: string;
  /** An Idempotency-Key this workspace has used, with the request it was used on. */
  idempotency?: { key: string; url: string; body: unknown };
  /** Every string that belongs to this workspace and must never reach another one. */
  secrets(): string[];
}

const RECORDS: Record<string, (tag: string) => Record<string, unknown>> = {
  account: (tag) => ({ object: 'account', externalId: `a-${tag}`, fields: { $name: { value: `Account ${tag}`, valueType: 'TEXT' } } }),
  contact: (tag) => ({
    object: 'contact',
    externalId: `p-${tag}`,
    fields: {
      $name: { value: { firstName: 'Con', lastName: tag }, valueType: 'FULL_NAME' },
      $email: { value: [`${tag.toLowerCase()}@canary.test`], valueType: 'EMAIL' },
    },
  }),
  opportunity: (tag) => ({
    object: 'opportunity',
    externalId: `o-${tag}`,
    fields: { $name: { value: `Deal ${tag}`, valueType: 'TEXT' }, $stage: { value: 'Lead' } },
    relationships: { $account: { values: [`a-${tag}`] } },
  }),
  note: (tag) => ({
    object: 'note',
    externalId: `n-${tag}`,
    fields: { $title: { value: `Note ${tag}`, valueType: 'TEXT' }, $content: { value: `secret note ${tag}` } },
    relationships: { $account: { values: [`a-${tag}`] }, $createdBy: { values: [`u-${tag}`] } },
  }),
  task: (tag) => ({
    object: 'task',
    externalId: `t-${tag}`,
    fields: { $title: { value: `Task ${tag}`, valueType: 'TEXT' }, $status: { value: 'TODO' } },
    relationships: { $assignedTo: { values: [`u-${tag}`] }, $note: { values: [`n-${tag}`] } },
  }),
};

/** The owner's mailbox, one received e-mail with canary text, and the mailbox the fuzz cases send from. */
function mailObjects(tag: string, address: string): Array<Record<string, unknown>> {
  const v = (value: unknown, valueType: string) => ({ value, valueType });
  return [
    { object: 'mailbox', externalId: `mb-${tag}`, user: `u-${tag}`, address },
    { object: 'mailbox', externalId: `mb-fuzz-${tag}`, user: `u-${tag}`, address: FUZZ_MAILBOX },
    {
      object: 'email',
      externalId: `e-${tag}`,
      mailbox: `mb-${tag}`,
      fields: {
        $subject: v(`secret subject ${tag}`, 'TEXT'),
        $body: v(`<p>secret body ${tag}</p>`, 'HTML'),
        $sentAt: v(new Date().toISOString(), 'DATETIME'),
        $from: v(`from-${tag.toLowerCase()}@canary.test`, 'EMAIL'),
        $to: v([address], 'EMAIL'),
      },
    },
  ];
}

/**
 * A restricted channel whose only member is the owner, and a message in it holding an imported
 * file: bytes that only the owner may have (docs/files.md §Who downloads the bytes). Returns the
 * ids as restrictedChannel, restrictedMessage and channelFile.
 */
async function seedChannelFile(t: TestApp, workspaceId: string, tag: string): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-canary-'));
  try {
    writeFileSync(join(dir, 'chat.txt'), `chat attachment ${tag}`);
    const at = (value: string, valueType: string) => ({ value, valueType });
    const objects = [
      { object: 'channel', externalId: `cr-${tag}`, provider: 'slack', name: `restricted-${tag}`, visibility: 'restricted', members: [`u-${tag}`] },
      { object: 'file', externalId: `fc-${tag}`, source: 'api', filename: `chat-${tag}.txt`, mimeType: 'text/plain', path: join(dir, 'chat.txt') },
      {
        object: 'message',
        externalId: `mr-${tag}`,
        channel: `cr-${tag}`,
        fields: { $text: at(`restricted text ${tag}`, 'TEXT'), $sentAt: at(new Date().toISOString(), 'DATETIME') },
        relationships: { $files: { objectType: 'file', values: [`fc-${tag}`] } },
      },
    ];
    const text = objects.map((o) => JSON.stringify(o)).join('\n');
    const { ids } = await runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds({ blobs: t.deps.blobs }), text });
    const out = { restrictedChannel: ids.channel?.[`cr-${tag}`], restrictedMessage: ids.message?.[`mr-${tag}`], channelFile: ids.file?.[`fc-${tag}`] };
    for (const [name, id] of Object.entries(out)) if (!id) throw new Error(`canary ${name}: not imported`);
    return out as Record<string, string>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A mailbox address every canary owner has: the fuzz cases' `from`. */
export const FUZZ_MAILBOX = 'fuzz@canary.test';

export async function seedCanary(t: TestApp, label: string, operations: Set<string>): Promise<Canary> {
  const tag = `CANARY${label}${randomBytes(5).toString('hex').toUpperCase()}`;
  const db = t.deps.db.kysely;
  const ws = await createWorkspace(systemCtx(db), { name: `Workspace ${tag}` });
  const user = await createUser(operatorCtx(db, ws.id), { email: `owner-${tag.toLowerCase()}@canary.test`, role: 'admin', externalId: `u-${tag}` });
  const secret = (await createKey(operatorCtx(db, ws.id), { userId: user.id, scopes: null, expiresInMs: null })).secret;
  const kinds = importKinds();
  const objects: Array<Record<string, unknown>> = [
    { object: 'channel', externalId: `c-${tag}`, provider: 'slack', name: `chan-${tag}`, visibility: 'public', members: [`u-${tag}`] },
    {
      object: 'message',
      externalId: `m-${tag}`,
      channel: `c-${tag}`,
      fields: { $text: { value: `secret text ${tag}`, valueType: 'TEXT' }, $sentAt: { value: new Date().toISOString(), valueType: 'DATETIME' } },
    },
  ];
  for (const [kind, make] of Object.entries(RECORDS)) if (kinds.some((k) => k.object === kind)) objects.push(make(tag));
  const mailbox = `mailbox-${tag.toLowerCase()}@canary.test`;
  if (kinds.some((k) => k.object === 'email')) objects.push(...mailObjects(tag, mailbox));
  const imported = await runImport(operatorCtx(t.deps.db.kysely, ws.id), { kinds: kinds, text: objects.map((o) => JSON.stringify(o)).join('\n') });
  const ids: Record<string, string> = { user: user.id, workspace: ws.id };
  for (const [object, byExt] of Object.entries(imported.ids)) for (const id of Object.values(byExt)) ids[object] = id;

  const canary: Canary = {
    tag,
    workspaceId: ws.id,
    userId: user.id,
    secret,
    ids,
    ...(ids.mailbox ? { mailbox } : {}),
    secrets: () => [
      tag,
      tag.toLowerCase(),
      ...Object.values(ids),
      ...(canary.uploadPath ? [canary.uploadPath.split('/').pop()!] : []),
      ...(canary.downloadPath ? [canary.downloadPath.split('/').pop()!] : []),
    ],
  };

  if (operations.has('createObjectRecord')) {
    // A custom object type of this workspace alone, with one record. Its slug is random rather
    // than the tag: an unknown slug is echoed in the 404, and the tag must never be.
    const op = operatorCtx(db, ws.id);
    const slug = `p_${randomBytes(6).toString('hex')}`;
    await defineObjectType(op, { slug, label: `Projects ${tag}` });
    await addField(op, { objectType: slug, key: 'name', label: 'Name', valueType: 'TEXT' });
    await addRelationship(op, { objectType: slug, key: 'client', label: 'Client', cardinality: 'has_one', targetType: 'account' });
    const res = await call(t, secret, 'POST', `/v1/objects/${slug}/values`, { fields: { name: `Project ${tag}` }, relationships: { client: ids.account } });
    if (res.statusCode !== 200) throw new Error(`canary custom record: ${res.statusCode} ${res.body}`);
    ids.objectType = slug;
    ids.customRecord = res.json().id;
  }

  if (operations.has('createList')) {
    const type = ids.contact ? 'contact' : 'account';
    const rel = ids[type] ? { relationships: { [`$${type}s`]: [ids[type]] } } : {};
    const body = { fields: { $name: `List ${tag}`, $objectType: type }, ...rel };
    const key = `idem-${tag}`;
    const res = await call(t, secret, 'POST', '/v1/lists', body, { 'idempotency-key': key });
    if (res.statusCode !== 200) throw new Error(`canary list: ${res.statusCode} ${res.body}`);
    ids.list = res.json().id;
    canary.idempotency = { key, url: '/v1/lists', body };
  }

  if (operations.has('createFile')) {
    const bytes = Buffer.from(`file bytes ${tag}`);
    const created = await call(t, secret, 'POST', '/v1/files', { filename: `${tag}.txt`, mimeType: 'text/plain', sizeBytes: bytes.length });
    if (created.statusCode !== 200) throw new Error(`canary file: ${created.statusCode} ${created.body}`);
    const file = created.json();
    ids.file = file.id;
    const put = await t.app.inject({ method: 'PUT', url: new URL(file.uploadUrl).pathname, headers: file.uploadHeaders, payload: bytes });
    if (put.statusCode !== 200) throw new Error(`canary upload: ${put.statusCode} ${put.body}`);
    const md5 = createHash('md5').update(bytes).digest('hex');
    const done = await call(t, secret, 'POST', `/v1/files/${file.id}/complete`, { md5 });
    if (done.statusCode !== 200) throw new Error(`canary complete: ${done.statusCode} ${done.body}`);
    const url = await call(t, secret, 'GET', `/v1/files/${file.id}/url`);
    canary.downloadPath = new URL(url.json().url).pathname;
    // A second, pending file keeps a live upload token.
    const pending = (await call(t, secret, 'POST', '/v1/files', { filename: `pending-${tag}.txt`, mimeType: 'text/plain', sizeBytes: 10 })).json();
    ids.pendingFile = pending.id;
    canary.uploadPath = new URL(pending.uploadUrl).pathname;
    if (operations.has('getMessage')) Object.assign(ids, await seedChannelFile(t, ws.id, tag));
  }

  if (operations.has('createMeeting')) {
    // A transcript file, and a meeting its owner organized, with a contact among the attendees.
    const bytes = Buffer.from(`transcript ${tag}`);
    const created = await call(t, secret, 'POST', '/v1/files', {
      filename: `call-${tag}.txt`,
      mimeType: 'text/plain',
      sizeBytes: bytes.length,
      purpose: 'meeting_transcript',
    });
    const file = created.json();
    await t.app.inject({ method: 'PUT', url: new URL(file.uploadUrl).pathname, headers: file.uploadHeaders, payload: bytes });
    const done = await call(t, secret, 'POST', `/v1/files/${file.id}/complete`, { md5: createHash('md5').update(bytes).digest('hex') });
    if (done.statusCode !== 200) throw new Error(`canary transcript: ${done.statusCode} ${done.body}`);
    ids.transcript = file.id;
    const meeting = await call(t, secret, 'POST', '/v1/meetings', {
      fields: {
        $title: `Meeting ${tag}`,
        $startDate: '2026-01-02T10:00:00Z',
        $endDate: '2026-01-02T11:00:00Z',
        $description: `secret agenda ${tag}`,
        $organizerEmail: `owner-${tag.toLowerCase()}@canary.test`,
        $attendeeEmails: [`${tag.toLowerCase()}@canary.test`],
        $privacySetting: 'METADATA',
      },
      relationships: { $transcript: file.id },
    });
    if (meeting.statusCode !== 200) throw new Error(`canary meeting: ${meeting.statusCode} ${meeting.body}`);
    ids.meeting = meeting.json().id;
  }

  // Spare records for the deletes (and merges), so that the canary's own stay live for every
  // other operation: `spare<Kind>` names each.
  const spares: Array<[string, string, string, unknown]> = [
    ['deleteAccount', 'spareAccount', '/v1/accounts', { fields: { $name: `Spare ${tag}` } }],
    ['deleteContact', 'spareContact', '/v1/contacts', { fields: { $name: { firstName: 'Spare', lastName: tag } } }],
    [
      'deleteOpportunity',
      'spareOpportunity',
      '/v1/opportunities',
      { fields: { $name: `Spare ${tag}`, $stage: 'Lead' }, relationships: { $account: ids.account } },
    ],
    ['deleteTask', 'spareTask', '/v1/tasks', { fields: { $title: `Spare ${tag}`, $status: 'TODO' }, relationships: { $assignedTo: user.id } }],
    ['deleteNote', 'spareNote', '/v1/notes', { fields: { $title: `Spare ${tag}` } }],
    ['deleteList', 'spareList', '/v1/lists', { fields: { $name: `Spare ${tag}`, $objectType: 'account' } }],
    [
      'deleteMeeting',
      'spareMeeting',
      '/v1/meetings',
      { fields: { $title: `Spare ${tag}`, $startDate: '2026-01-03T10:00:00Z', $endDate: '2026-01-03T11:00:00Z' } },
    ],
    ['deleteObjectRecord', 'spareCustomRecord', `/v1/objects/${ids.objectType}/values`, { fields: { name: `Spare ${tag}` } }],
  ];
  spares.push(
    ['mergeAccounts', 'mergeAccount', '/v1/accounts', { fields: { $name: `Twin ${tag}` } }],
    ['mergeContacts', 'mergeContact', '/v1/contacts', { fields: { $name: { firstName: 'Twin', lastName: tag } } }],
    [
      'mergeOpportunities',
      'mergeOpportunity',
      '/v1/opportunities',
      { fields: { $name: `Twin ${tag}`, $stage: 'Lead' }, relationships: { $account: ids.account } },
    ],
    ['mergeObjectValues', 'mergeCustomRecord', `/v1/objects/${ids.objectType}/values`, { fields: { name: `Twin ${tag}` } }],
    ['getMerge', 'mergeSource', '/v1/accounts', { fields: { $name: `Merged ${tag}` } }],
  );
  for (const [op, name, url, body] of spares) {
    if (!operations.has(op)) continue;
    const res = await call(t, secret, 'POST', url, body);
    if (res.statusCode !== 200) throw new Error(`canary ${name}: ${res.statusCode} ${res.body}`);
    ids[name] = res.json().id;
  }
  if (operations.has('getMerge') && ids.mergeSource) {
    // A merge of two spare accounts, for the merge read.
    const twin = (await call(t, secret, 'POST', '/v1/accounts', { fields: { $name: `Merged twin ${tag}` } })).json().id;
    const res = await call(t, secret, 'POST', '/v1/accounts/merge', { primaryId: ids.mergeSource, duplicateId: twin });
    if (res.statusCode !== 200) throw new Error(`canary merge: ${res.statusCode} ${res.body}`);
    ids.merge = res.json().merge.id;
  }
  if (operations.has('getEnrichmentRun') && ids.account) {
    // A finished run on the account: the canary's account has no website, so a request would skip.
    const at = new Date().toISOString();
    ids.enrichmentRun = newId('enr');
    const run = { id: ids.enrichmentRun, workspace_id: ws.id, entity_type: 'account' as const, entity_id: ids.account, trigger: 'manual' as const };
    const times = { created_at: at, updated_at: at, started_at: at, completed_at: at, due_at: at };
    await insertRun(db, {
      ...run,
      ...times,
      status: 'completed',
      target_fields: '["$linkedIn"]',
      named_fields: '[]',
      lease_owner: null,
      attempts: 1,
      error: null,
    });
  }
  return canary;
}

/** The tables of each test app's database, read once: no test adds one after its first read. */
const tablesOf = new WeakMap<TestApp, string[]>();

/**
 * The tables of this test's database. Not Kysely's introspection: on PostgreSQL it reads every
 * schema of the server, and fails when another test drops its schema meanwhile.
 */
export async function tableNames(t: TestApp): Promise<string[]> {
  const known = tablesOf.get(t);
  if (known) return known;
  const db = t.deps.db.kysely;
  const rows = t.tdb.schema
    ? await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${t.tdb.schema}`.execute(db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  const names = rows.rows
    .map((r) => r.name)
    .filter((n) => !n.startsWith('kysely_'))
    .sort();
  tablesOf.set(t, names);
  return names;
}

/** Rows in every table of the database, for "nothing changed" checks: one statement, one round trip. */
export async function tableCounts(t: TestApp): Promise<Record<string, number>> {
  const names = await tableNames(t);
  const counts = names.map((name) => sql`select ${sql.lit(name)} as name, count(*) as n from ${sql.table(name)}`);
  const { rows } = await sql<{ name: string; n: number | string }>`${sql.join(counts, sql` union all `)}`.execute(t.deps.db.kysely);
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]));
}

/** Names the strings of `secrets` that occur in `text`. */
export function leaked(text: string, secrets: string[]): string[] {
  return secrets.filter((s) => s.length >= 6 && text.includes(s));
}

export { headers };
