// SQL of meetings: the row, its contents (read only for FULL rows), its participants' folded
// addresses, the ranked listing, and the reads behind the derived relationships of meetings and
// of records (docs/meetings.md).
import {
  chunks,
  defineRank,
  jsonTextElements,
  keyedRead,
  lockedForChange,
  lockedForUpdate,
  lockPartition,
  prepared,
  rankChange,
  rankDelete,
  rankInsert,
  rankPage,
  type Executor,
  type Tx,
} from '../db/index.ts';
import { type RawBuilder, sql, type SqlBool } from 'kysely';
import { emailKey } from '../lib/email.ts';
import type { MeetingContentsTable, MeetingsTable } from './tables.ts';
import { byName, named } from '../import/repository.ts';

export type MeetingRow = MeetingsTable;
export type ContentsRow = MeetingContentsTable;

/** A workspace's meetings, newest `$startDate` first, ties by id (docs/pages.md). */
export const MEETINGS = defineRank({ name: 'meetings', table: 'meetings', by: ['workspace_id'], ts: 'start_date', id: 'id' });

export interface NewMeeting {
  row: MeetingRow;
  contents: ContentsRow;
  /** Folded, each once. */
  participants: readonly string[];
}

/** The participants' rows of meetings, in statements of 300 rows. */
async function insertParticipants(tx: Tx, meetings: ReadonlyArray<Pick<NewMeeting, 'row' | 'participants'>>): Promise<void> {
  const rows = meetings.flatMap(({ row, participants }) => participants.map((email) => ({ meeting_id: row.id, workspace_id: row.workspace_id, email })));
  for (const part of chunks(rows, 300)) await tx.insertInto('meeting_participants').values(part).execute();
}

/** Inserts meetings of one workspace with their contents and participants, and ranks them. */
export async function insertMeetings(tx: Tx, workspaceId: string, meetings: readonly NewMeeting[]): Promise<void> {
  if (meetings.length === 0) return;
  await lockPartition(tx, MEETINGS, [workspaceId]);
  for (const part of chunks([...meetings], 100)) {
    await tx
      .insertInto('meetings')
      .values(part.map((m) => m.row))
      .execute();
    await tx
      .insertInto('meeting_contents')
      .values(part.map((m) => m.contents))
      .execute();
  }
  await insertParticipants(tx, meetings);
  await rankInsert(
    tx,
    MEETINGS,
    [workspaceId],
    meetings.map((m) => ({ ts: m.row.start_date, id: m.row.id })),
  );
}

/** Inserts a meeting with its contents and participants, and ranks it. */
export function insertMeeting(tx: Tx, row: MeetingRow, contents: ContentsRow, participants: readonly string[]): Promise<void> {
  return insertMeetings(tx, row.workspace_id, [{ row, contents, participants }]);
}

export type StoredMeeting = MeetingRow & Pick<ContentsRow, 'description' | 'transcript_id'>;

/** The workspace's meetings that these names name (docs/import.md §Export), with their contents, by name. */
export async function meetingsByExternalId(db: Executor, workspaceId: string, externalIds: readonly string[]): Promise<Map<string, StoredMeeting>> {
  return byName(externalIds, (part, by) =>
    db
      .selectFrom('meetings as m')
      .leftJoin('meeting_contents as c', 'c.meeting_id', 'm.id')
      .selectAll('m')
      .select(['c.description', 'c.transcript_id'])
      .where('m.workspace_id', '=', workspaceId)
      .where(named(by, part, 'm'))
      .execute(),
  );
}

/**
 * Rewrites a meeting in place (its id and createdAt stay), moves it in the listing, and returns the
 * updatedAt stored: the row's, or the later one held (docs/records.md §Times of writes).
 */
export async function replaceMeeting(
  tx: Tx,
  old: MeetingRow,
  row: MeetingRow,
  contents: Pick<ContentsRow, 'description' | 'transcript_id'>,
  participants: readonly string[],
): Promise<string> {
  const { id, workspace_id: _ws, created_at: _c, updated_at: at, ...set } = row;
  const later = sql<string>`case when updated_at > ${at} then updated_at else ${at} end`;
  const update = tx
    .updateTable('meetings')
    .set({ ...set, updated_at: later })
    .where('id', '=', id);
  const stored = await update.returning('updated_at').executeTakeFirst();
  await tx.updateTable('meeting_contents').set(contents).where('meeting_id', '=', id).execute();
  await tx.deleteFrom('meeting_participants').where('meeting_id', '=', id).execute();
  await insertParticipants(tx, [{ row, participants }]);
  if (old.start_date !== row.start_date) {
    await rankChange(tx, MEETINGS, [row.workspace_id], { removed: [{ ts: old.start_date, id }], added: [{ ts: row.start_date, id }] });
  }
  return stored?.updated_at ?? at;
}

export async function findMeeting(db: Executor, workspaceId: string, id: string): Promise<MeetingRow | undefined> {
  return db.selectFrom('meetings').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/**
 * The meeting an update changes, locked for it (PostgreSQL): a delete or another update of it that
 * came first is waited for, and the meeting is then read as it left it (gone, for a delete).
 */
export async function findMeetingToChange(tx: Executor, workspaceId: string, id: string): Promise<MeetingRow | undefined> {
  return lockedForChange(tx, tx.selectFrom('meetings').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId)).executeTakeFirst();
}

/** The meeting a delete takes to the trash, locked for it: an update of it that came first is waited for and kept. */
export async function findMeetingToDelete(tx: Executor, workspaceId: string, id: string): Promise<MeetingRow | undefined> {
  return lockedForUpdate(tx, tx.selectFrom('meetings').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId)).executeTakeFirst();
}

/** A page of the workspace's meetings and their count, from one snapshot. */
export function pageMeetings(db: Executor, workspaceId: string, page: { limit: number; offset: number }) {
  return rankPage<MeetingRow>(db, MEETINGS, [workspaceId], page, true);
}

/**
 * Which of a page's `meetings` the caller reads at FULL: fullAccessSql's rule spelled for rows
 * already read, so that a page pays no round trip for it: one query when the caller has an address
 * and the page holds a METADATA meeting, none otherwise. test/api/meetings-access-rule.test.ts
 * holds it and fullAccessOf to the rule's table over generated cases.
 */
export async function pageFullAccess(
  db: Executor,
  meetings: readonly Pick<MeetingRow, 'id' | 'privacy_setting'>[],
  email: string | undefined,
): Promise<Set<string>> {
  const closed = meetings.filter((r) => r.privacy_setting === 'METADATA').map((r) => r.id);
  const own =
    email === undefined || closed.length === 0
      ? []
      : await db.selectFrom('meeting_participants').select('meeting_id').where('meeting_id', 'in', closed).where('email', '=', email).execute();
  const full = new Set(own.map((r) => r.meeting_id));
  for (const r of meetings) if (r.privacy_setting !== 'METADATA') full.add(r.id);
  return full;
}

/** The table of the participants given to fullAccessOf, made by its statement. */
const HELD = 'held_participants';

/**
 * SQL: the caller reads the meeting of alias `m` at FULL (docs/meetings.md §Who sees what): its
 * privacy is not METADATA, or `email` (the caller's folded address; undefined for a workspace key
 * or a user of no account here, who takes part in nothing) is one of its participants. The one
 * statement of the rule: an update and a trash entry evaluate it through fullAccessOf, a download
 * in src/files/repository.ts; a page applies it to rows already read (pageFullAccess).
 * `participants` names the table of its participants: a meeting in the trash keeps its own
 * (src/trash/repository.ts holdTranscript, docs/files.md §Who downloads the bytes).
 */
export function fullAccessSql(
  m: string,
  email: string | undefined,
  participants: 'meeting_participants' | 'trash_participants' | typeof HELD = 'meeting_participants',
): RawBuilder<SqlBool> {
  const privacy = sql.ref(`${m}.privacy_setting`);
  const open = sql<SqlBool>`(${privacy} is null or ${privacy} <> 'METADATA')`;
  if (email === undefined) return open;
  return sql<SqlBool>`(${open} or exists (select 1 from ${sql.table(participants)} p where p.meeting_id = ${sql.ref(`${m}.id`)} and p.email = ${email}))`;
}

/**
 * Which of `meetings`, each as read (its id and privacy), the caller reads at FULL: fullAccessSql
 * evaluated on those values, so that the rule is written once and the privacy judged is the one
 * the answer shows. Their participants are the live meetings' (`meeting_participants`), or, for
 * meetings no longer live (a trash entry's), `held`: each one's folded addresses.
 */
export async function fullAccessOf(
  db: Executor,
  meetings: readonly Pick<MeetingRow, 'id' | 'privacy_setting'>[],
  email: string | undefined,
  held?: ReadonlyMap<string, readonly string[]>,
): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of chunks([...meetings], 200)) {
    const rows = sql.join(part.map((r) => sql`(cast(${r.id} as text), cast(${r.privacy_setting} as text))`));
    // The held addresses as a table of the statement, one JSON array a meeting: SQLite refuses a
    // compound select of over 500 terms, and a meeting has up to 1,001 participants.
    const each = (id: string) => jsonTextElements(db, sql`cast(${JSON.stringify(held?.get(id) ?? [])} as text)`, 'e');
    const pairs = part.map((r) => sql` union all select cast(${r.id} as text), e.value from ${each(r.id)}`);
    const given =
      held === undefined
        ? sql``
        : sql`, ${sql.table(HELD)} (meeting_id, email) as (select cast(null as text), cast(null as text) where 1 = 0${sql.join(pairs, sql``)})`;
    const found = await sql<{ id: string }>`with m (id, privacy_setting) as (values ${rows})${given}
      select m.id from m where ${fullAccessSql('m', email, held === undefined ? 'meeting_participants' : HELD)}`.execute(db);
    for (const r of found.rows) out.add(r.id);
  }
  return out;
}

/** Description and transcript of meetings; ask only for meetings read at FULL access. */
export async function contentsOf(db: Executor, meetingIds: readonly string[]): Promise<Map<string, ContentsRow>> {
  if (meetingIds.length === 0) return new Map();
  const rows = await db.selectFrom('meeting_contents').selectAll().where('meeting_id', 'in', meetingIds).execute();
  return new Map(rows.map((r) => [r.meeting_id, r]));
}

export async function updateMeeting(tx: Executor, id: string, set: Partial<Pick<MeetingRow, 'privacy_setting' | 'updated_at'>>): Promise<void> {
  await tx.updateTable('meetings').set(set).where('id', '=', id).execute();
}

export async function setTranscript(tx: Executor, id: string, transcriptId: string): Promise<void> {
  await tx.updateTable('meeting_contents').set({ transcript_id: transcriptId }).where('meeting_id', '=', id).execute();
}

/** The transcript currently linked, read only to compare on update (never returned at METADATA). */
export async function transcriptOf(tx: Executor, id: string): Promise<string | null> {
  const r = await tx.selectFrom('meeting_contents').select('transcript_id').where('meeting_id', '=', id).executeTakeFirst();
  return r?.transcript_id ?? null;
}

// On every page and retrieve of a user key: a hot-path read (src/db/prepared.ts).
const userEmailQuery = prepared((db: Executor, workspaceId: string, userId: string) =>
  db.selectFrom('users').select('email').where('id', '=', userId).where('workspace_id', '=', workspaceId),
);

/** A user's address as its key (emailKey: folded, the domain in ASCII); undefined for a user of no account here. */
export async function userEmail(db: Executor, workspaceId: string, userId: string): Promise<string | undefined> {
  const r = (await userEmailQuery(db, workspaceId, userId))[0];
  return r ? emailKey(r.email) : undefined;
}

/** The keys of the workspace's members' addresses (emailKey) among `emails` (keys). */
export async function memberEmails(db: Executor, workspaceId: string, emails: readonly string[]): Promise<Set<string>> {
  const wanted = new Set(emails);
  const rows = await db.selectFrom('users').select('email').where('workspace_id', '=', workspaceId).execute();
  return new Set(rows.map((r) => emailKey(r.email)).filter((e) => wanted.has(e)));
}

type IdsByKey = Map<string, string[]>;

function group(rows: Array<{ key: string; value: string }>): IdsByKey {
  const out: IdsByKey = new Map();
  for (const r of rows) {
    const list = out.get(r.key) ?? [];
    if (!list.includes(r.value)) list.push(r.value);
    out.set(r.key, list);
  }
  return out;
}

/**
 * Rows of entity_relationships named `name` whose source is a record of `sourceKind` and whose
 * target is one of `targets`, as target → sources (the inverse index).
 */
async function sourcesOf(db: Executor, workspaceId: string, name: string, sourceKind: string, targets: readonly string[]): Promise<IdsByKey> {
  const rows: Array<{ key: string; value: string }> = [];
  for (const part of chunks([...targets])) {
    // Each source's record read by its id, its type and workspace checked on the rows returned: a
    // condition on them lets the planner read the workspace's whole listing of the type instead,
    // which it does when the statistics take the workspace for a small one (docs/design.md
    // §Database statistics).
    const found = await db
      .selectFrom('entity_relationships as e')
      .innerJoin('records as r', 'r.id', 'e.source_id')
      .select(['e.target_id as key', 'e.source_id as value', 'r.kind', 'r.workspace_id'])
      .where('e.target_id', 'in', part)
      .where('e.name', '=', name)
      .orderBy('e.source_id')
      .execute();
    for (const f of found) if (f.kind === sourceKind && f.workspace_id === workspaceId) rows.push({ key: f.key, value: f.value });
  }
  return group(rows);
}

/** source → targets of the relationship `name` of these sources. */
async function targetsOf(db: Executor, name: string, sources: readonly string[]): Promise<IdsByKey> {
  const rows: Array<{ key: string; value: string }> = [];
  for (const part of chunks([...sources])) {
    rows.push(
      ...(await db
        .selectFrom('entity_relationships')
        .select(['source_id as key', 'target_id as value'])
        .where('source_id', 'in', part)
        .where('name', '=', name)
        .orderBy('target_id')
        .execute()),
    );
  }
  return group(rows);
}

export interface ContactOfAddress {
  email: string;
  contact: string;
  account: string | null;
}

export interface DerivedLinks {
  /** For each folded address asked for, each contact whose `$email` holds it, once a `$account` target. */
  contacts: ContactOfAddress[];
  /** account → the opportunities whose `$account` is that account. */
  opportunities: IdsByKey;
}

/**
 * A meeting page's derived relationships (docs/meetings.md §Derived relationships): for each folded
 * address among `emails`, the contacts whose `$email` holds it with their `$account` targets; then
 * the opportunities of the workspace whose `$account` is one of those accounts. Two statements,
 * each driven by the keys it is given, so that the work follows the rows found whatever the
 * statistics say: joined in one, a planner that takes the tables for empty ones (a young database,
 * never analyzed) reads every relationship row for each pair of a contact and a relationship row
 * (docs/design.md §Database statistics).
 */
export async function derivedOf(db: Executor, workspaceId: string, emails: readonly string[]): Promise<DerivedLinks> {
  const contacts: ContactOfAddress[] = [];
  for (const part of chunks([...new Set(emails)])) {
    const rows = await db
      .selectFrom('record_values as v')
      .leftJoin('entity_relationships as a', (j) => j.onRef('a.source_id', '=', 'v.record_id').on('a.name', '=', '$account'))
      .select(['v.value_text as email', 'v.record_id as contact', 'a.target_id as account'])
      .where('v.workspace_id', '=', workspaceId)
      .where('v.object_type', '=', 'contact')
      .where('v.field', '=', '$email')
      .where('v.value_text', 'in', part)
      .execute();
    for (const r of rows) contacts.push({ email: r.email as string, contact: r.contact, account: r.account });
  }
  const accounts = [...new Set(contacts.flatMap((c) => (c.account === null ? [] : [c.account])))];
  const opportunities = accounts.length === 0 ? new Map<string, string[]>() : await sourcesOf(db, workspaceId, '$account', 'opportunity', accounts);
  return { contacts, opportunities };
}

/** opportunity → its account. */
export const accountsOfOpportunities = (db: Executor, opportunityIds: readonly string[]) => targetsOf(db, '$account', opportunityIds);
/** account → the contacts linked to it. */
export const contactsOfAccounts = (db: Executor, workspaceId: string, accountIds: readonly string[]) =>
  sourcesOf(db, workspaceId, '$account', 'contact', accountIds);

export interface ContactMeeting {
  contactId: string;
  meetingId: string;
  startDate: string;
}

// The contacts' `$email` rows of the value index joined to the meetings those addresses take part
// in: one statement (one round trip on PostgreSQL), where reading the addresses first takes two.
function contactMeetings(db: Executor) {
  return db
    .selectFrom('record_values as v')
    .innerJoin('meeting_participants as p', (j) => j.onRef('p.workspace_id', '=', 'v.workspace_id').onRef('p.email', '=', 'v.value_text'))
    .innerJoin('meetings as m', 'm.id', 'p.meeting_id')
    .select(['v.record_id as contactId', 'p.meeting_id as meetingId', 'm.start_date as startDate', 'v.workspace_id as workspaceId'])
    .where('v.field', '=', '$email')
    .where('v.object_type', '=', 'contact');
}

// The meetings of the contacts asked for in one turn are read together (src/db/keyed.ts). A
// record id is unique across workspaces; the workspace is still checked on each row.
const meetingsByContact = keyedRead({ select: contactMeetings, key: 'v.record_id', keyOf: (row) => row.contactId });

/** contact → the meetings one of its `$email` addresses takes part in, with their `$startDate` (a pair may repeat). */
export async function meetingsOfContacts(db: Executor, workspaceId: string, contactIds: readonly string[]): Promise<ContactMeeting[]> {
  if (contactIds.length === 1) return (await meetingsByContact(db, contactIds[0] as string)).filter((r) => r.workspaceId === workspaceId);
  const out: ContactMeeting[] = [];
  // Found by record id alone, the workspace checked on each row: a condition on the workspace lets
  // the planner read the workspace's whole `$email` range through the value index instead, which
  // it does when the statistics take the workspace for a small one (docs/design.md §Database statistics).
  for (const part of chunks([...contactIds]))
    for (const r of await contactMeetings(db).where('v.record_id', 'in', part).execute()) if (r.workspaceId === workspaceId) out.push(r);
  return out;
}

/** Takes a meeting out of its tables and its listing (the trash); returns its contents and participants. */
export async function takeMeeting(tx: Tx, row: MeetingRow): Promise<{ contents: ContentsRow | undefined; participants: string[] }> {
  await lockPartition(tx, MEETINGS, [row.workspace_id]);
  const contents = await tx.selectFrom('meeting_contents').selectAll().where('meeting_id', '=', row.id).executeTakeFirst();
  const people = await tx.selectFrom('meeting_participants').select('email').where('meeting_id', '=', row.id).execute();
  await tx.deleteFrom('meeting_participants').where('meeting_id', '=', row.id).execute();
  await tx.deleteFrom('meeting_contents').where('meeting_id', '=', row.id).execute();
  await tx.deleteFrom('meetings').where('id', '=', row.id).execute();
  await rankDelete(tx, MEETINGS, [row.workspace_id], [{ ts: row.start_date, id: row.id }]);
  return { contents, participants: people.map((p) => p.email) };
}

/** Serializes the writers of the workspace's meetings listing (a delete against a delete). */
export function lockMeetings(tx: Tx, workspaceId: string): Promise<void> {
  return lockPartition(tx, MEETINGS, [workspaceId]);
}
