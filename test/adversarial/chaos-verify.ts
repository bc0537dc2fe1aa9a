// What must hold once the chaos workload is done (test/adversarial/chaos.test.ts): pages count
// what they list, links point at live records on both ends or are held in the trash, the trash
// restores, history and events record each acknowledged write once and in order, and one
// idempotency key made one record. Each broken rule is added to the run's problems.
import { isDeepStrictEqual } from 'node:util';
import { write } from '../../src/db/index.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { AppError } from '../../src/lib/errors.ts';
import { restore } from '../../src/trash/restore.ts';
import { call } from '../helpers/app.ts';
import { type Answer, type Kind, PLURAL, type Run, TYPES, type World } from './chaos-workload.ts';

/** Ids of the workspace's live records and lists, by kind, and its trash entries. */
async function stored(r: Run, w: World) {
  const db = r.t.deps.db.kysely;
  const live = new Map<string, Kind>();
  for (const row of await db.selectFrom('records').select(['id', 'kind']).where('workspace_id', '=', w.workspaceId).execute())
    live.set(row.id, row.kind as Kind);
  for (const row of await db.selectFrom('lists').select('id').where('workspace_id', '=', w.workspaceId).execute()) live.set(row.id, 'list');
  const trash = await db.selectFrom('trash').select(['id', 'merged_into']).where('workspace_id', '=', w.workspaceId).execute();
  return { live, trash: new Map(trash.map((e) => [e.id, e.merged_into])) };
}

async function get(r: Run, w: World, url: string): Promise<any> {
  const res = await call(r.t, w.secret, 'GET', url);
  if (res.statusCode !== 200) r.problems.push(`GET ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

/** Pages through `url`: every page's totalCount is the number of entries fetched, each once. */
async function allPages(r: Run, w: World, url: string): Promise<string[]> {
  const ids: string[] = [];
  const totals = new Set<number>();
  for (let offset = 0; ; offset += 25) {
    const page = await get(r, w, `${url}${url.includes('?') ? '&' : '?'}limit=25&offset=${offset}`);
    totals.add(page.totalCount);
    ids.push(...page.data.map((x: { id: string }) => x.id));
    if (page.data.length < 25) break;
  }
  if (totals.size !== 1 || [...totals][0] !== ids.length) r.problems.push(`${url}: totalCount ${[...totals].join('/')} but ${ids.length} entries fetched`);
  if (new Set(ids).size !== ids.length) r.problems.push(`${url}: an entry listed twice`);
  return ids;
}

/** Listings and links of one workspace, against the stored rows. */
export async function checkWorkspace(r: Run, w: World, when: string): Promise<void> {
  await rankUpkeepSettled();
  const { live, trash } = await stored(r, w);
  for (const kind of TYPES) {
    const listed = new Set(await allPages(r, w, `/v1/${PLURAL[kind]}`));
    const expected = [...live].filter(([, k]) => k === kind).map(([id]) => id);
    if (listed.size !== expected.length || !expected.every((id) => listed.has(id)))
      r.problems.push(`${when}: /v1/${PLURAL[kind]} lists ${listed.size}, ${expected.length} are live`);
  }
  const db = r.t.deps.db.kysely;
  const mine = (id: string) => live.has(id) || trash.has(id);
  const members = await db
    .selectFrom('list_members')
    .innerJoin('lists', 'lists.id', 'list_members.list_id')
    .select(['list_id', 'entity_id'])
    .where('lists.workspace_id', '=', w.workspaceId)
    .execute();
  for (const m of members) if (!live.has(m.entity_id)) r.problems.push(`${when}: list ${m.list_id} holds ${m.entity_id}, which is not live`);
  for (const [id, kind] of live) {
    if (kind !== 'list') continue;
    const listed = await allPages(r, w, `/v1/lists/${id}/contacts`);
    const held = members.filter((m) => m.list_id === id).map((m) => m.entity_id);
    if (listed.length !== held.length || !held.every((x) => listed.includes(x)))
      r.problems.push(`${when}: list ${id} pages ${listed.length} members, holds ${held.length}`);
  }
  const sources = [...live.keys()].filter((id) => live.get(id) !== 'list');
  const links = sources.length === 0 ? [] : await db.selectFrom('entity_relationships').selectAll().where('source_id', 'in', sources).execute();
  for (const l of links)
    if (!['member', 'file'].includes(l.object_type) && !live.has(l.target_id))
      r.problems.push(`${when}: ${l.source_id} ${l.name} → ${l.target_id}, which is not live`);
  const inverse =
    sources.length === 0 ? [] : await db.selectFrom('entity_relationships').select(['source_id', 'target_id']).where('target_id', 'in', sources).execute();
  for (const l of inverse) if (!live.has(l.source_id)) r.problems.push(`${when}: ${l.source_id}, not live, links to ${l.target_id}`);
  // Both ends through the API: a contact's $account is an account whose $contact holds it, and a
  // note's contacts show it as their $note.
  const contactsOf = new Map<string, Set<string>>();
  for (const [id, kind] of live) {
    if (kind !== 'account') continue;
    const acc = await get(r, w, `/v1/accounts/${id}`);
    contactsOf.set(id, new Set(acc.relationships?.$contact?.values ?? []));
  }
  for (const [id, kind] of live) {
    if (kind !== 'contact') continue;
    const con = await get(r, w, `/v1/contacts/${id}`);
    for (const v of con.relationships?.$account?.values ?? [])
      if (!contactsOf.get(v)?.has(id)) r.problems.push(`${when}: contact ${id} names account ${v}, whose $contact does not name it`);
  }
  // Held rows name their entry on one end, and on the other a live record or another entry.
  const entries = [...trash.keys()];
  const held = entries.length === 0 ? [] : await db.selectFrom('trash_links').selectAll().where('trash_id', 'in', entries).execute();
  for (const h of held) {
    const other = h.source_id === h.trash_id ? h.target_id : h.target_id === h.trash_id ? h.source_id : undefined;
    if (other === undefined) r.problems.push(`${when}: entry ${h.trash_id} holds ${h.source_id} → ${h.target_id}, naming neither end`);
    else if (!['member', 'file'].includes(h.object_type) && !mine(other))
      r.problems.push(`${when}: entry ${h.trash_id} holds a link to ${other}, which is gone`);
  }
  const heldMembers = entries.length === 0 ? [] : await db.selectFrom('trash_members').selectAll().where('trash_id', 'in', entries).execute();
  for (const h of heldMembers) {
    const other = h.list_id === h.trash_id ? h.entity_id : h.entity_id === h.trash_id ? h.list_id : undefined;
    if (other === undefined || !mine(other)) r.problems.push(`${when}: entry ${h.trash_id} holds membership ${h.list_id}/${h.entity_id}, an end gone`);
  }
}

/** Restores every entry of the workspace that is not a merged duplicate; each comes back or is refused for a unique value. */
export async function restoreAll(r: Run, w: World): Promise<number> {
  const { trash } = await stored(r, w);
  const db = r.t.deps.db.kysely;
  let n = 0;
  for (const [id, merged] of trash) {
    if (merged !== null) continue;
    try {
      await write(db, (tx) => restore({ ...operatorCtx(db, w.workspaceId), db: tx }, { id }), {
        followUpFailed: (err) => r.problems.push(`restore ${id} follow-up: ${String(err)}`),
      });
      n++;
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'duplicate_value')) r.problems.push(`restore ${id} at the end: ${String(err)}`);
    }
  }
  return n;
}

/** The name a body or a resource gives: a note's $title, another record's $name (a contact's last name). */
const nameOf = (kind: Kind, body: any): string | undefined => {
  const v = kind === 'note' ? body?.fields?.$title : body?.fields?.$name;
  const value = v !== null && typeof v === 'object' && 'value' in v ? v.value : v;
  return typeof value === 'string' ? value : value?.lastName;
};

/** Acknowledged writes, each once: the ones a replay answered are the first one's. */
function acked(r: Run, w: number): Answer[] {
  return r.answers.filter((a) => a.ws === w && a.status === 200 && !a.replayed && a.method !== 'GET' && a.kind !== undefined && a.step !== 'file');
}

/**
 * History: each name an acknowledged create or update gave a live record is in the record's $name
 * (a note's $title) history once, its newest entry is the current value, and it holds no name that
 * no acknowledged write gave it or a record merged into it.
 */
export async function checkHistory(r: Run, wi: number): Promise<void> {
  const w = r.worlds[wi]!;
  const { live } = await stored(r, w);
  const given = new Map<string, string[]>();
  const give = (id: string, name: string | undefined) => name !== undefined && given.set(id, [...(given.get(id) ?? []), name]);
  const mergedInto = new Map<string, string>();
  for (const a of acked(r, wi)) {
    if (a.kind === 'list' || a.step === 'delete') continue;
    if (a.step === 'merge') mergedInto.set((a.body as any).duplicateId, a.id!);
    else give(a.id!, nameOf(a.kind!, a.body));
  }
  // The names a record may have had: its own, and those of the records merged into it, in turn.
  const names = (id: string, seen = new Set<string>()): string[] => {
    seen.add(id);
    const into = [...mergedInto].filter(([d, p]) => p === id && !seen.has(d)).flatMap(([d]) => names(d, seen));
    return [...(given.get(id) ?? []), ...into];
  };
  for (const [id, kind] of live) {
    // Notes keep history too, but no route reads it (docs/history.md).
    if (kind === 'list' || kind === 'note' || !given.has(id)) continue;
    const field = '$name';
    const entries: any[] = (await get(r, w, `/v1/${PLURAL[kind]}/${id}/fields/${field}/history?limit=100`)).data ?? [];
    const history = entries.map((e) => nameOf(kind, { fields: { [field]: e.value } }));
    const mine = given.get(id)!;
    const from = new Set(names(id));
    for (const n of mine)
      if (history.filter((x) => x === n).length !== 1) r.problems.push(`history of ${id}: "${n}" ${history.filter((x) => x === n).length} times`);
    // An imported record's names come from the import (docs/history.md §Storage).
    for (const n of history) if (n === undefined || (!from.has(n) && !n.startsWith('imp-'))) r.problems.push(`history of ${id}: "${n}" was never acknowledged`);
    const current = nameOf(kind, await get(r, w, `/v1/${PLURAL[kind]}/${id}`));
    if (history[0] !== current) r.problems.push(`history of ${id}: newest "${history[0]}", current "${current}"`);
  }
}

/**
 * Events: each acknowledged create, update, delete and merge has one event whose object is the
 * answer (unless a purge erased the events naming an id it holds), every such event answers an
 * acknowledged write, and one object's events come in the order of its updatedAt.
 */
export async function checkEvents(r: Run, wi: number, purged: ReadonlySet<string>): Promise<void> {
  const w = r.worlds[wi]!;
  const rows = await r.t.deps.db.kysely
    .selectFrom('events')
    .select(['seq', 'type', 'object_id', 'body'])
    .where('workspace_id', '=', w.workspaceId)
    .orderBy('seq')
    .execute();
  const events = rows.map((e) => ({ ...e, body: JSON.parse(e.body) }));
  const typeOf = (a: Answer) =>
    `${a.kind}.${{ delete: 'deleted', merge: 'merged' }[a.step as string] ?? (a.step.startsWith('create') || a.step === 'idempotentCreate' ? 'created' : 'updated')}`;
  const objectOf = (a: Answer) => (a.step === 'merge' ? a.json.primary : a.json);
  // A purge erases the events naming the purged id (docs/trash.md §Purge): an event of X may
  // name, in its changes, any record that an answer mentioning X linked to it.
  const texts = r.answers.filter((a) => a.ws === wi && a.status === 200).map((a) => JSON.stringify([a.url, a.body, a.json]));
  const erasable = (id: string) => texts.some((x) => x.includes(id) && [...purged].some((p) => x.includes(p)));
  // Answers with one body: a delete of a record already in the trash answers the body of the
  // delete that trashed it and appends nothing; every other write appends one event.
  const same = new Map<string, Answer[]>();
  for (const a of acked(r, wi)) {
    const key = `${typeOf(a)} ${JSON.stringify(objectOf(a))}`;
    same.set(key, [...(same.get(key) ?? []), a]);
  }
  for (const group of same.values()) {
    const a = group[0]!;
    const matching = events.filter((e) => e.type === typeOf(a) && isDeepStrictEqual(e.body.data.object, objectOf(a))).length;
    const erased = erasable(a.id!);
    // A merged duplicate is in the trash without a delete's event: deleting it appends none.
    const merged = acked(r, wi).some((m) => m.step === 'merge' && (m.body as { duplicateId: string }).duplicateId === a.id);
    const fits = a.step === 'delete' ? matching <= group.length && (matching >= 1 || merged) : matching === group.length;
    if (!fits && !(erased && matching < group.length)) r.problems.push(`events of ${a.step} ${a.url}: ${matching} match its answer, ${group.length} answered`);
  }
  const answered = acked(r, wi).map((a) => objectOf(a));
  for (const e of events) {
    if (!/\.(created|updated|merged)$/.test(e.type) || e.type.startsWith('list.members')) continue;
    if (e.body.data.object.externalId) continue;
    if (!answered.some((o) => isDeepStrictEqual(o, e.body.data.object))) r.problems.push(`event ${e.type} of ${e.object_id} answers no acknowledged write`);
  }
  const last = new Map<string, string>();
  for (const e of events) {
    const at = e.body.data?.object?.updatedAt;
    if (!/\.(created|updated|merged)$/.test(e.type) || typeof at !== 'string') continue;
    if ((last.get(e.object_id) ?? '') > at) r.problems.push(`events of ${e.object_id}: ${e.type} at ${at} after one at ${last.get(e.object_id)}`);
    last.set(e.object_id, at);
  }
}

/**
 * Every 200 answer for one idempotency key names one record, and one record was created for it;
 * unless that record was purged, which erases the stored answers naming it (docs/trash.md §Purge),
 * so that the key runs again.
 */
export async function checkIdempotency(r: Run, wi: number, purged: ReadonlySet<string>): Promise<void> {
  const w = r.worlds[wi]!;
  const events = await r.t.deps.db.kysely
    .selectFrom('events')
    .select('body')
    .where('workspace_id', '=', w.workspaceId)
    .where('type', '=', 'contact.created')
    .execute();
  for (const [key, body] of w.keyBodies) {
    const ids = new Set(r.answers.filter((a) => a.ws === wi && a.key === key && a.status === 200).map((a) => a.json.id));
    if ([...ids].filter((id) => !purged.has(id)).length > 1) r.problems.push(`idempotency key ${key}: answered ${[...ids].join(', ')}`);
    const name = (body as any).fields.$name.lastName;
    const made = events.filter((e) => e.body.includes(`"${name}"`)).length;
    if (made > 1) r.problems.push(`idempotency key ${key}: ${made} contacts created`);
  }
}
