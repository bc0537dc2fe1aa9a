// The chaos test's workload: a random plan of mixed writes and reads over a few workspaces, run
// with many requests at once, and what each was answered. API requests go through app.inject and
// are judged against the served OpenAPI document and the codes their case allows; the operator's
// side (trash restore and purge, the sweeper's retention, an import) runs the functions its command
// runs, in this process.
import fc from 'fast-check';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { write } from '../../src/db/index.ts';
import { ImportFailed, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { AppError } from '../../src/lib/errors.ts';
import { purge, purgeExpiredTrash } from '../../src/trash/purge.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, type Seeded, type TestApp } from '../helpers/app.ts';
import { md5, putBytes } from '../helpers/files.ts';
import { type Operation, operationFor, type ResponseChecker } from '../helpers/openapi-ops.ts';

export const TYPES = ['account', 'contact', 'note', 'list'] as const;
export type Kind = (typeof TYPES)[number];
export const PLURAL: Record<Kind, string> = { account: 'accounts', contact: 'contacts', note: 'notes', list: 'lists' };
/** The values of the unique contact field `code`: few, so that writes collide on purpose. */
const CODES = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];

const STEPS = [
  ['createAccount', 3],
  ['updateAccount', 3],
  ['createContact', 4],
  ['updateContact', 4],
  ['idempotentCreate', 3],
  ['createNote', 2],
  ['updateNote', 2],
  ['delete', 4],
  ['createList', 2],
  ['updateList', 3],
  ['merge', 3],
  ['restore', 3],
  ['purge', 1],
  ['sweep', 1],
  ['file', 2],
  ['import', 1],
  ['read', 3],
] as const;
export type Step = (typeof STEPS)[number][0];

export interface PlannedOp {
  step: Step;
  ws: number;
  a: number;
  b: number;
  c: number;
  flag: boolean;
}

export function planArb(n: number, workspaces: number): fc.Arbitrary<PlannedOp[]> {
  const step = fc.oneof(...STEPS.map(([s, weight]) => ({ weight, arbitrary: fc.constant(s) })));
  const op = fc.record({ step, ws: fc.nat(workspaces - 1), a: fc.nat(), b: fc.nat(), c: fc.nat(), flag: fc.boolean() });
  return fc.array(op, { minLength: n, maxLength: n });
}

export interface World extends Seeded {
  /** Every id of the workspace the run made, whatever became of it. */
  ids: Record<Kind, string[]>;
  /** Ids deleted or merged away: what restores and purges pick from. */
  trashed: string[];
  /** Idempotency keys of creates, each with its one body. */
  keyBodies: Map<string, unknown>;
}

/** An API answer of the run (2xx ones are acknowledged). */
export interface Answer {
  ws: number;
  step: Step;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  body: unknown;
  key?: string;
  status: number;
  json: any;
  replayed: boolean;
  /** The record the write is about and its type. */
  kind?: Kind;
  id?: string;
}

export interface Run {
  t: TestApp;
  worlds: World[];
  ops: Map<string, Operation>;
  checker: ResponseChecker;
  answers: Answer[];
  problems: string[];
  /** Outcomes of the operator's side, by step and outcome. */
  tally: Record<string, number>;
  seq: number;
}

const pick = <T>(xs: readonly T[], n: number): T | undefined => (xs.length === 0 ? undefined : xs[n % xs.length]);
const fresh = (r: Run, what: string) => `${what}-${r.seq++}`;
const count = (r: Run, what: string) => (r.tally[what] = (r.tally[what] ?? 0) + 1);

/** The codes each step may answer besides 200; anything else (a 5xx above all) is a problem. */
const ALLOWED: Record<string, string[]> = {
  create: ['relationship_entity_inactive', 'relationship_entity_missing', 'duplicate_value', 'idempotency_conflict'],
  update: ['resource_not_found', 'relationship_entity_inactive', 'relationship_entity_missing', 'duplicate_value'],
  delete: ['resource_not_found'],
  merge: ['relationship_entity_missing', 'invalid_value', 'duplicate_value'],
  file: ['invalid_file_state', 'idempotency_conflict'],
  read: ['resource_not_found'],
};

async function api(r: Run, ws: number, step: Step, allowed: string[], method: Answer['method'], url: string, body?: unknown, key?: string) {
  const w = r.worlds[ws]!;
  const res = await call(r.t, w.secret, method, url, body, key ? { 'idempotency-key': key } : {});
  const op = operationFor([...r.ops.values()], method, url);
  const why = r.checker.check(op, res);
  const json = res.body ? JSON.parse(res.body) : undefined;
  const where = `${step} ${method} ${url} ${JSON.stringify(body ?? null).slice(0, 300)}`;
  if (res.statusCode >= 500) r.problems.push(`${where}: ${res.statusCode} ${res.body.slice(0, 500)}`);
  else if (why) r.problems.push(`${where}: ${why}`);
  else if (res.statusCode !== 200 && !allowed.includes(json?.error?.code)) r.problems.push(`${where}: unexpected ${res.statusCode} ${res.body.slice(0, 300)}`);
  const a: Answer = { ws, step, method, url, body, key, status: res.statusCode, json, replayed: res.headers['idempotent-replayed'] === 'true' };
  r.answers.push(a);
  return a;
}

function recordOf(a: Answer, kind: Kind, id?: string): Answer {
  a.kind = kind;
  a.id = id ?? a.json?.id;
  return a;
}

/** An operator's command: its outcome is counted, and an error it may not give is a problem. */
async function operator(r: Run, step: Step, allowed: string[], fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    count(r, `${step} done`);
    return true;
  } catch (err) {
    // An import may fail only on the unique value it collides with.
    const collided = err instanceof ImportFailed && err.errors.every((e) => /code/.test(e.message));
    const code = err instanceof AppError ? err.code : collided ? 'import_failed' : undefined;
    if (code !== undefined && allowed.includes(code)) {
      count(r, `${step} ${code}`);
      return false;
    }
    r.problems.push(`${step}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return false;
  }
}

export async function runOp(r: Run, o: PlannedOp): Promise<void> {
  const w = r.worlds[o.ws]!;
  const db = r.t.deps.db.kysely;
  const { account: accounts, contact: contacts, note: notes, list: lists } = w.ids;
  switch (o.step) {
    case 'createAccount': {
      const a = await api(r, o.ws, o.step, ALLOWED.create!, 'POST', '/v1/accounts', { fields: { $name: fresh(r, 'acc') } });
      if (a.status === 200) accounts.push(recordOf(a, 'account').id!);
      return;
    }
    case 'updateAccount': {
      const id = pick(accounts, o.a);
      if (!id) return;
      const c = pick(contacts, o.b);
      const body = { fields: { $name: fresh(r, 'acc') }, ...(o.flag && c ? { relationships: { $contact: { add: [c] } } } : {}) };
      recordOf(await api(r, o.ws, o.step, ALLOWED.update!, 'POST', `/v1/accounts/${id}`, body), 'account', id);
      return;
    }
    case 'createContact':
    case 'updateContact': {
      const acc = pick(accounts, o.b);
      const fields = { $name: { firstName: 'C', lastName: fresh(r, 'con') }, ...(o.flag ? { code: CODES[o.c % CODES.length] } : {}) };
      if (o.step === 'createContact') {
        const body = { fields, ...(acc && o.c % 2 ? { relationships: { $account: acc } } : {}) };
        const a = await api(r, o.ws, o.step, ALLOWED.create!, 'POST', '/v1/contacts', body);
        if (a.status === 200) contacts.push(recordOf(a, 'contact').id!);
        return;
      }
      const id = pick(contacts, o.a);
      if (!id) return;
      const body = { fields, ...(acc && o.c % 3 === 0 ? { relationships: { $account: { replace: acc } } } : {}) };
      recordOf(await api(r, o.ws, o.step, ALLOWED.update!, 'POST', `/v1/contacts/${id}`, body), 'contact', id);
      return;
    }
    case 'idempotentCreate': {
      // A few keys per workspace, each always sent with its one body, often at the same moment.
      const key = `idem-${o.ws}-${o.c % 6}`;
      if (!w.keyBodies.has(key)) w.keyBodies.set(key, { fields: { $name: { firstName: 'I', lastName: fresh(r, 'idem') } } });
      const a = await api(r, o.ws, o.step, ALLOWED.create!, 'POST', '/v1/contacts', w.keyBodies.get(key), key);
      if (a.status === 200 && !a.replayed) contacts.push(recordOf(a, 'contact').id!);
      else if (a.status === 200) recordOf(a, 'contact');
      return;
    }
    case 'createNote': {
      const links = [pick(contacts, o.a), pick(contacts, o.b)].filter((x) => x !== undefined);
      const acc = pick(accounts, o.c);
      const body = { fields: { $title: fresh(r, 'nte') }, relationships: { $contact: [...new Set(links)], ...(acc ? { $account: [acc] } : {}) } };
      const a = await api(r, o.ws, o.step, ALLOWED.create!, 'POST', '/v1/notes', body);
      if (a.status === 200) notes.push(recordOf(a, 'note').id!);
      return;
    }
    case 'updateNote': {
      const id = pick(notes, o.a);
      const [add, remove] = [pick(contacts, o.b), pick(contacts, o.c)];
      if (!id) return;
      const rel = add && remove && add !== remove ? { relationships: { $contact: { add: [add], remove: [remove] } } } : {};
      recordOf(await api(r, o.ws, o.step, ALLOWED.update!, 'POST', `/v1/notes/${id}`, { fields: { $title: fresh(r, 'nte') }, ...rel }), 'note', id);
      return;
    }
    case 'delete': {
      const kind = TYPES[o.b % TYPES.length]!;
      const id = pick(w.ids[kind], o.a);
      if (!id) return;
      const a = recordOf(await api(r, o.ws, o.step, ALLOWED.delete!, 'DELETE', `/v1/${PLURAL[kind]}/${id}`), kind, id);
      if (a.status === 200) w.trashed.push(id);
      return;
    }
    case 'createList': {
      const members = [...new Set([pick(contacts, o.a), pick(contacts, o.b)].filter((x) => x !== undefined))];
      const body = { fields: { $name: fresh(r, 'lst'), $objectType: 'contact' }, relationships: { $contacts: members } };
      const a = await api(r, o.ws, o.step, ALLOWED.create!, 'POST', '/v1/lists', body);
      if (a.status === 200) lists.push(recordOf(a, 'list').id!);
      return;
    }
    case 'updateList': {
      const id = pick(lists, o.a);
      const [add, remove] = [pick(contacts, o.b), pick(contacts, o.c)];
      if (!id) return;
      const change = o.flag ? { add: [add] } : { remove: [remove] };
      const rel = add && remove && add !== remove ? { relationships: { $contacts: change } } : {};
      recordOf(await api(r, o.ws, o.step, ALLOWED.update!, 'POST', `/v1/lists/${id}`, { fields: { $name: fresh(r, 'lst') }, ...rel }), 'list', id);
      return;
    }
    case 'merge': {
      const kind = o.c % 2 ? 'contact' : 'account';
      const [primaryId, duplicateId] = [pick(w.ids[kind], o.a), pick(w.ids[kind], o.b)];
      if (!primaryId || !duplicateId) return;
      const body = { primaryId, duplicateId, ...(o.flag ? { fieldResolutions: { $name: 'duplicate' } } : {}) };
      const a = await api(r, o.ws, o.step, ALLOWED.merge!, 'POST', `/v1/${PLURAL[kind]}/merge`, body);
      recordOf(a, kind, primaryId);
      if (a.status === 200) w.trashed.push(duplicateId);
      return;
    }
    case 'restore':
    case 'purge': {
      const id = pick(w.trashed, o.a);
      if (!id) return;
      const ctx = () => operatorCtx(db, w.workspaceId);
      const rerun = { rerun: () => count(r, `${o.step} rerun`) };
      if (o.step === 'restore')
        await operator(r, o.step, ['resource_not_found', 'invalid_value', 'duplicate_value'], () =>
          write(db, (tx) => restore({ ...ctx(), db: tx }, { id }), { followUpFailed: (err) => r.problems.push(`restore follow-up: ${String(err)}`), ...rerun }),
        );
      else await operator(r, o.step, ['resource_not_found'], () => write(db, (tx) => purge({ ...ctx(), db: tx }, { ids: [id] }), rerun));
      return;
    }
    case 'sweep':
      // The retention of the sweeper, for the entries of any workspace a second old or more.
      await operator(r, o.step, [], () => purgeExpiredTrash(db, Date.now(), 1000, 3));
      return;
    case 'file': {
      const bytes = Buffer.from(fresh(r, 'bytes'));
      const created = await api(r, o.ws, o.step, ALLOWED.file!, 'POST', '/v1/files', { filename: 'f.txt', mimeType: 'text/plain', sizeBytes: bytes.length });
      if (created.status !== 200) return;
      const put = await putBytes(r.t, created.json.uploadUrl, created.json.uploadHeaders, bytes);
      if (put.status !== 200) r.problems.push(`file PUT: ${put.status} ${put.body.slice(0, 300)}`);
      const end = o.flag ? 'complete' : 'cancel';
      const a = await api(r, o.ws, o.step, ALLOWED.file!, 'POST', `/v1/files/${created.json.id}/${end}`, o.flag ? { md5: md5(bytes) } : {});
      if (a.status === 200 && a.json.status !== (o.flag ? 'COMPLETED' : 'CANCELLED')) r.problems.push(`file ${end}: ${a.json.status}`);
      return;
    }
    case 'import': {
      // A small NDJSON of contacts, one of whose codes may collide with a contact's: then the import
      // fails naming the line, as docs/import.md §Rules says.
      const lines = [0, 1].map((i) => ({
        object: 'contact',
        externalId: fresh(r, 'imp'),
        fields: {
          $name: { value: { firstName: 'M', lastName: fresh(r, 'imp') }, valueType: 'FULL_NAME' },
          ...(o.flag && i === 0 ? { code: { value: CODES[o.c % CODES.length], valueType: 'TEXT' } } : {}),
        },
      }));
      const text = lines.map((l) => JSON.stringify(l)).join('\n');
      const commit = r.t.dialect === 'postgres' ? 'atomic' : 'batched';
      await operator(r, o.step, ['import_failed'], () => runImport(operatorCtx(db, w.workspaceId), { kinds: importKinds(), text, commit }));
      return;
    }
    case 'read': {
      const kind = TYPES[o.b % TYPES.length]!;
      const list = pick(lists, o.a);
      if (o.flag && list) await api(r, o.ws, o.step, ALLOWED.read!, 'GET', `/v1/lists/${list}/contacts?limit=5`);
      else await api(r, o.ws, o.step, [], 'GET', `/v1/${PLURAL[kind]}?limit=7&offset=${o.c % 12}`);
      return;
    }
  }
}

/** Runs the plan with `concurrency` requests in flight. */
export async function runPlan(r: Run, plan: readonly PlannedOp[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < plan.length; i = next++) await runOp(r, plan[i]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
