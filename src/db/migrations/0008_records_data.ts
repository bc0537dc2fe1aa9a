import { createHash, randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

// Records written before 0007 held `{name: {value, valueType}}` under the earlier field names.
// This converts every record to the stored format of docs/records.md §Stored values, creates the
// definitions its data needs and fills the value index, losing nothing (docs/records.md
// §Records written before 0008 says what becomes of each earlier name). Everything it relies on
// is written out here, so that later changes to the catalogue or the index never change it.

type Json = Record<string, unknown>;
interface Stored {
  value: unknown;
  valueType: string;
}

/** An earlier system field that has a counterpart in the catalogue of 0007. */
interface Renamed {
  key: string;
  valueType: string;
  convert: (v: unknown) => unknown;
}
const list = (v: unknown) => [v];
const same = (v: unknown) => v;
const RENAMED: Record<string, Record<string, Renamed>> = {
  account: {
    $name: { key: '$name', valueType: 'TEXT', convert: same },
    $domain: { key: '$website', valueType: 'URL', convert: list },
    $address: { key: '$primaryAddress', valueType: 'ADDRESS', convert: same },
    // SINGLE_SELECT then, MULTI_SELECT now: the one label becomes a list of one option id.
    $industry: { key: '$industry', valueType: 'SINGLE_SELECT', convert: list },
  },
  contact: {
    $name: { key: '$name', valueType: 'FULL_NAME', convert: same },
    $email: { key: '$email', valueType: 'EMAIL', convert: list },
  },
  opportunity: {
    $name: { key: '$name', valueType: 'TEXT', convert: same },
    $stage: { key: '$stage', valueType: 'SINGLE_SELECT', convert: same },
  },
};

/** Labels of earlier system fields that became custom fields (snake case of the name). */
const LABELS: Record<string, string> = {
  $phone: 'Phone',
  $employees: 'Employees',
  $title: 'Title',
  $address: 'Address',
  $linkedin: 'LinkedIn',
  $amount: 'Amount',
  $closeDate: 'Close date',
  $description: 'Description',
};
const HANDLE_SERVICES: Record<string, string> = { $linkedin: 'LINKEDIN' };

/** Earlier system relationships that became custom ones: type → name → definition. */
const RELATIONSHIPS: Record<string, Record<string, { label: string; cardinality: string; targetType: string }>> = {
  contact: { $owner: { label: 'Owner', cardinality: 'has_one', targetType: 'member' } },
  opportunity: { $contacts: { label: 'Contacts', cardinality: 'has_many', targetType: 'contact' } },
};

/** The default options of the select fields of 0007 that earlier data used. */
const DEFAULT_OPTIONS: Record<string, readonly string[]> = {
  'account/$industry': [
    'Software',
    'Financial services',
    'Healthcare',
    'Manufacturing',
    'Retail',
    'Education',
    'Media',
    'Telecommunications',
    'Energy',
    'Transportation',
    'Real estate',
    'Professional services',
    'Government',
    'Non-profit',
    'Other',
  ],
  'opportunity/$stage': ['Lead', 'Qualified', 'Discovery', 'Proposal', 'Negotiation', 'Closed won', 'Closed lost'],
};

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** The ids of system definitions' default options, as 0007 derives them. */
function derivedId(kind: string, seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += ALPHABET[(digest[i] as number) & 31];
  return `${kind}_${out}`;
}
/** A time-sortable id: 10 characters of milliseconds, 16 random. */
function newId(kind: string, ms: number): string {
  let time = '';
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  return `${kind}_${time}${[...randomBytes(16)].map((b) => ALPHABET[b & 31]).join('')}`;
}

const snake = (name: string) => name.replace(/^\$/, '').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const humanize = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replace(/_/g, ' ');
const SELECTS = new Set(['SINGLE_SELECT', 'MULTI_SELECT']);

/** Where one earlier (name, valueType) pair of a workspace's type goes. */
interface Target {
  name: string;
  valueType: string;
  key: string;
  system: boolean;
  convert: (v: unknown) => unknown;
  records: number;
  /** Select fields: option ids by label, in order of first use. */
  options: Map<string, string>;
}

/** The plan of one workspace and type: targets by `name\0valueType`, relationship keys by name. */
interface Plan {
  workspaceId: string;
  type: string;
  targets: Map<string, Target>;
  relationships: Map<string, string>;
}

const BATCH = 500;

async function* batches(db: Kysely<any>): AsyncGenerator<Array<{ id: string; workspace_id: string; kind: string; fields: string }>> {
  let after = '';
  for (;;) {
    const rows = await db.selectFrom('records').select(['id', 'workspace_id', 'kind', 'fields']).where('id', '>', after).orderBy('id').limit(BATCH).execute();
    if (rows.length === 0) return;
    yield rows;
    after = (rows.at(-1) as { id: string }).id;
  }
}

function planOf(plans: Map<string, Plan>, workspaceId: string, type: string): Plan {
  const id = `${workspaceId}\u0000${type}`;
  let plan = plans.get(id);
  if (!plan) plans.set(id, (plan = { workspaceId, type, targets: new Map(), relationships: new Map() }));
  return plan;
}

function entries(fields: string): Array<[string, Stored]> {
  return Object.entries(JSON.parse(fields) as Record<string, Stored>).filter(([, e]) => e.value !== null && e.value !== undefined);
}

/** Pass 1: which earlier names and types each workspace's records hold, and their select labels. */
async function survey(db: Kysely<any>): Promise<Map<string, Plan>> {
  const plans = new Map<string, Plan>();
  for await (const rows of batches(db)) {
    for (const r of rows) {
      const plan = planOf(plans, r.workspace_id, r.kind);
      for (const [name, e] of entries(r.fields)) {
        const id = `${name}\u0000${e.valueType}`;
        let t = plan.targets.get(id);
        if (!t) {
          const renamed = RENAMED[r.kind]?.[name];
          const system = renamed !== undefined && renamed.valueType === e.valueType;
          const convert = system ? renamed.convert : same;
          plan.targets.set(id, (t = { name, valueType: e.valueType, key: system ? renamed.key : '', system, convert, records: 0, options: new Map() }));
        }
        t.records++;
        if (SELECTS.has(e.valueType)) for (const label of Array.isArray(e.value) ? e.value : [e.value]) t.options.set(label as string, '');
      }
    }
  }
  const rels: Array<{ workspace_id: string; kind: string; name: string }> = await db
    .selectFrom('entity_relationships as e')
    .innerJoin('records as r', 'r.id', 'e.source_id')
    .select(['r.workspace_id', 'r.kind', 'e.name'])
    .where('e.name', 'in', ['$owner', '$contacts'])
    .groupBy(['r.workspace_id', 'r.kind', 'e.name'])
    .execute();
  for (const r of rels) if (RELATIONSHIPS[r.kind]?.[r.name]) planOf(plans, r.workspace_id, r.kind).relationships.set(r.name, '');
  return plans;
}

/**
 * Keys of the custom definitions: custom attributes keep their slug (clients already send it),
 * the most used valueType first; earlier system names take their snake case after them. A key
 * already taken gets `_2`, `_3`, … (fields and relationships share one set of keys).
 */
function assignKeys(plan: Plan): void {
  const taken = new Set<string>();
  const take = (base: string) => {
    let key = base;
    for (let n = 2; taken.has(key); n++) key = `${base.slice(0, 62 - String(n).length)}_${n}`;
    taken.add(key);
    return key;
  };
  const custom = [...plan.targets.values()].filter((t) => !t.system);
  const byUse = (a: Target, b: Target) => b.records - a.records || (a.valueType < b.valueType ? -1 : 1);
  for (const t of custom.filter((t) => !t.name.startsWith('$')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : byUse(a, b))))
    t.key = take(t.name);
  for (const t of custom.filter((t) => t.name.startsWith('$')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : byUse(a, b))))
    t.key = take(snake(t.name));
  for (const name of [...plan.relationships.keys()].sort()) plan.relationships.set(name, take(snake(name)));
}

/** Definition rows and option rows for one plan; option ids are filled into the targets. */
async function define(db: Kysely<any>, plan: Plan, now: number, seq: { n: number }): Promise<void> {
  const { workspaceId: ws, type } = plan;
  const createdAt = new Date(now).toISOString();
  const fields: Json[] = [];
  const options: Json[] = [];
  const targets = [...plan.targets.values()];
  // Earlier system names first, in the order they were defined, then custom attributes by key.
  const order = (t: Target) => (t.name in LABELS ? Object.keys(LABELS).indexOf(t.name) : t.name.startsWith('$') ? 100 : 1000);
  targets.sort((a, b) => order(a) - order(b) || (a.key < b.key ? -1 : 1));
  for (const t of targets) {
    if (!t.system) {
      const config: Json = {};
      if (HANDLE_SERVICES[t.name] && t.valueType === 'SOCIAL_HANDLE') config.handleService = HANDLE_SERVICES[t.name];
      fields.push({
        id: newId('fld', now + seq.n++),
        workspace_id: ws,
        object_type: type,
        key: t.key,
        label: LABELS[t.name] ?? humanize(t.key),
        description: null,
        value_type: t.valueType,
        config: JSON.stringify(config),
        created_at: createdAt,
      });
    }
    if (!SELECTS.has(t.valueType)) continue;
    const defaults = DEFAULT_OPTIONS[`${type}/${t.key}`] ?? [];
    const last = await db
      .selectFrom('select_options')
      .select((eb) => eb.fn.max('position').as('p'))
      .where('workspace_id', '=', ws)
      .where('object_type', '=', type)
      .where('field_key', '=', t.key)
      .executeTakeFirst();
    let position = Number(last?.p ?? -1) + 1;
    for (const label of t.options.keys()) {
      if (t.system && defaults.includes(label)) {
        t.options.set(label, derivedId('opt', `${ws}/${type}/option/${t.key}/${label}`));
        continue;
      }
      const id = newId('opt', now + seq.n++);
      t.options.set(label, id);
      options.push({ id, workspace_id: ws, object_type: type, field_key: t.key, label, description: null, position: position++ });
    }
  }
  const relationships = [...plan.relationships].map(([name, key]) => {
    const r = RELATIONSHIPS[type]?.[name] as { label: string; cardinality: string; targetType: string };
    const row = { workspace_id: ws, object_type: type, key, label: r.label, description: null, cardinality: r.cardinality, target_type: r.targetType };
    return { id: newId('rld', now + seq.n++), ...row, created_at: createdAt };
  });
  for (let i = 0; i < fields.length; i += 100)
    await db
      .insertInto('field_definitions')
      .values(fields.slice(i, i + 100))
      .execute();
  for (let i = 0; i < options.length; i += 100)
    await db
      .insertInto('select_options')
      .values(options.slice(i, i + 100))
      .execute();
  if (relationships.length > 0) await db.insertInto('relationship_definitions').values(relationships).execute();
}

const ADDRESS_PARTS = ['street', 'street2', 'city', 'state', 'postalCode', 'country'];

/**
 * One record's values in the stored format, and its value-index rows as docs/records.md §Value
 * index says: text folded (NFKC, lower case); numbers, currencies, checkboxes and DATETIMEs (ms)
 * as numbers; one row per element of a list, `firstName lastName` for a FULL_NAME, one row per
 * text part of an ADDRESS.
 */
function convert(plan: Plan, recordId: string, fields: string): { values: Json; index: Json[] } {
  const values: Json = {};
  const index: Json[] = [];
  const base = (field: string) => ({ workspace_id: plan.workspaceId, object_type: plan.type, field, record_id: recordId });
  const text = (field: string, v: unknown) => {
    if (typeof v === 'string') index.push({ ...base(field), value_text: v.normalize('NFKC').toLowerCase(), value_num: null });
  };
  const num = (field: string, n: number) => {
    if (Number.isFinite(n)) index.push({ ...base(field), value_text: null, value_num: n });
  };
  for (const [name, e] of entries(fields)) {
    const t = plan.targets.get(`${name}\u0000${e.valueType}`) as Target;
    let v = e.value;
    if (SELECTS.has(t.valueType)) v = Array.isArray(v) ? v.map((l) => t.options.get(l as string)) : t.options.get(v as string);
    v = t.convert(v);
    values[t.key] = v;
    // Old and new valueTypes index alike (a select is its option ids either way).
    const type = t.valueType;
    if (type === 'DATETIME' && typeof v === 'string') num(t.key, Date.parse(v));
    else if (['NUMBER', 'CURRENCY', 'CHECKBOX'].includes(type) && (typeof v === 'number' || typeof v === 'boolean')) num(t.key, Number(v));
    else if (type === 'FULL_NAME' && typeof v === 'object') {
      const o = v as Json;
      const parts = [o.firstName, o.lastName].filter((x): x is string => typeof x === 'string' && x !== '');
      if (parts.length > 0) text(t.key, parts.join(' '));
    } else if (type === 'ADDRESS' && typeof v === 'object') for (const part of ADDRESS_PARTS) text(t.key, (v as Json)[part]);
    else if (Array.isArray(v)) for (const x of v) text(t.key, x);
    else text(t.key, v);
  }
  return { values, index };
}

/** Pass 2: every record rewritten in batches, with its value-index rows. */
async function rewrite(db: Kysely<any>, plans: Map<string, Plan>): Promise<void> {
  for await (const rows of batches(db)) {
    const updates: Array<[string, string]> = [];
    const index: Json[] = [];
    for (const r of rows) {
      const out = convert(planOf(plans, r.workspace_id, r.kind), r.id, r.fields);
      updates.push([r.id, JSON.stringify(out.values)]);
      index.push(...out.index);
    }
    // One statement a batch; VALUES columns are column1, column2 on both databases.
    const tuples = sql.join(updates.map(([id, f]) => sql`(${id}, ${f})`));
    await sql`update records set fields = v.column2 from (values ${tuples}) as v where records.id = v.column1`.execute(db);
    const ids = rows.map((r) => r.id);
    await db.deleteFrom('record_values').where('record_id', 'in', ids).execute();
    for (let i = 0; i < index.length; i += 800)
      await db
        .insertInto('record_values')
        .values(index.slice(i, i + 800))
        .execute();
  }
}

/** Relationship rows of earlier names without a counterpart take their custom key; owners are members now. */
async function renameRelationships(db: Kysely<any>, plans: Map<string, Plan>): Promise<void> {
  for (const plan of plans.values()) {
    for (const [name, key] of plan.relationships) {
      const sources = db.selectFrom('records').select('id').where('workspace_id', '=', plan.workspaceId).where('kind', '=', plan.type);
      await db.updateTable('entity_relationships').set({ name: key }).where('name', '=', name).where('source_id', 'in', sources).execute();
    }
  }
  await db.updateTable('entity_relationships').set({ object_type: 'member' }).where('object_type', '=', 'user').execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  const plans = await survey(db);
  const now = Date.now();
  const seq = { n: 0 };
  for (const plan of plans.values()) {
    assignKeys(plan);
    await define(db, plan, now, seq);
  }
  await rewrite(db, plans);
  await renameRelationships(db, plans);
}
