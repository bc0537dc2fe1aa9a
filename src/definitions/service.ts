// The definitions of a type as one model (docs/records.md §Definitions): the system catalogue
// merged with what operators added. Record writes check values against it, reads shape records
// with it, and GET /v1/<plural>/definitions shows it.
import { inWrite } from '../db/index.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { derivedId, isoNow, newId } from '../lib/ids.ts';
import type { ValueType } from '../lib/resource-schemas.ts';
import { type HandleService, type Storage, SYSTEM_CATALOGUES, type SystemCatalogue } from './catalogue.ts';
import { isPhoneCountry } from '../lib/phone.ts';
import * as repo from './repository.ts';
import { checkLabel, clashingOption, clashMessage, outerSpaceless } from './labels.ts';

export const CUSTOM_KEY = /^[a-z][a-z0-9_]{0,62}$/;

export interface OptionDef {
  id: string;
  label: string;
  description: string | null;
}

export interface FieldDef {
  id: string;
  key: string;
  label: string;
  description: string | null;
  valueType: ValueType;
  readOnly: boolean;
  required: boolean;
  system: boolean;
  multipleValues: boolean;
  unique: boolean;
  currency: string | null;
  handleService: HandleService | null;
  /** Select fields only (possibly empty); null otherwise. */
  options: OptionDef[] | null;
  /** The only values the field takes (a task's `$status`); null: any. */
  values: readonly string[] | null;
  /**
   * TELEPHONE only: the country a number written without `+` is read in, the field's own
   * (`defaultCountry` of its definition) else the workspace's (docs/records.md §Telephone numbers).
   */
  defaultCountry: string | null;
}

export interface RelationshipDef {
  id: string;
  key: string;
  label: string;
  description: string | null;
  cardinality: 'has_one' | 'has_many';
  objectType: string;
  writable: 'yes' | 'create' | 'no';
  required: boolean;
  system: boolean;
  storage: Storage;
}

export interface TypeDefinitions {
  objectType: string;
  /** In display order: system fields first, then custom ones by creation. */
  fields: Map<string, FieldDef>;
  relationships: Map<string, RelationshipDef>;
  /**
   * The custom fields archived (docs/records.md §Correcting definitions): in none of the above, so
   * hidden from definitions, responses, filters and writes. Only `rolodex export` and `rolodex
   * import` read them, to carry their kept values (docs/import.md §Export).
   */
  archived: Map<string, FieldDef>;
}

const SELECTS = new Set<ValueType>(['SINGLE_SELECT', 'MULTI_SELECT']);
const NO_SYSTEM_DEFINITIONS: SystemCatalogue = { fields: {}, relationships: {} };

export function isSystemType(objectType: string): boolean {
  return Object.hasOwn(SYSTEM_CATALOGUES, objectType);
}

// Built definitions, by workspace and type, with the workspace's definitions version they were
// built under (migration 0017: triggers move it on every write of a definition, whoever writes).
// An entry is used only while that version is still the workspace's, read in the request's own
// snapshot; it is stored from reads outside a transaction, which see committed rows only, or from
// a transaction whose version is the committed one, which has written no definition (below); so
// no entry can hold what a transaction wrote and then rolled back. Built after the version was
// read, an entry is never older than its version (docs/records.md §Definitions).
// One cache per database: keyed by the dialect adapter, which a Kysely handle and its transactions
// share and another handle (another database, as in tests with fixed workspace ids) does not.
const CACHE_SIZE = 5_000;
type Cache = Map<string, { version: number; defs: TypeDefinitions | null }>;
const caches = new WeakMap<object, Cache>();

function cacheOf(db: Ctx['db']): Cache {
  const owner = db.getExecutor().adapter;
  let cache = caches.get(owner);
  if (!cache) caches.set(owner, (cache = new Map() as Cache));
  return cache;
}

/**
 * The definitions of `objectType` in ctx's workspace; null for a type that does not exist there.
 * `version`: the workspace's definitions version when the caller already read it (in the same
 * statement as records, `recordsWithVersion`).
 */
export async function loadDefinitions(ctx: Ctx, input: { objectType: string; version?: number }): Promise<TypeDefinitions | null> {
  const ws = ctx.actor.workspaceId;
  const version = input.version ?? (await repo.definitionsVersion(ctx.db, ws));
  const key = `${ws}/${input.objectType}`;
  const cache = cacheOf(ctx.db);
  const hit = cache.get(key);
  if (hit?.version === version) return hit.defs;
  const defs = await buildDefinitions(ctx, input.objectType);
  // Built inside a transaction, the entry is kept only if the version it read is the committed
  // one: the transaction has then written no definition (a write moves the version), so it saw
  // what every request sees at that version. Creates alone, with no read, fill the cache this way.
  // Where the committed version cannot be read (`rolodex import`), the entry is not kept.
  if (!ctx.db.isTransaction || (await repo.committedDefinitionsVersion(ctx.db, ws)) === version) {
    cache.delete(key);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(key, { version, defs });
  }
  return defs;
}

/**
 * The cached definitions of `objectType` in ctx's workspace, whatever version they were built
 * under: only to start reads alongside `loadDefinitions`, whose answer then decides whether those
 * reads stand (the same object when the version still holds).
 */
export function cachedDefinitions(ctx: Ctx, objectType: string): TypeDefinitions | null | undefined {
  return cacheOf(ctx.db).get(`${ctx.actor.workspaceId}/${objectType}`)?.defs;
}

/** The definitions as stored now, merged with the catalogue (no cache). Shared by every caller: never modified. */
export async function buildDefinitions(ctx: Ctx, objectType: string): Promise<TypeDefinitions | null> {
  const ws = ctx.actor.workspaceId;
  // A custom object type has no system definitions, only what operators added.
  const catalogue = SYSTEM_CATALOGUES[objectType] ?? ((await repo.findObjectType(ctx.db, ws, objectType)) ? NO_SYSTEM_DEFINITIONS : null);
  if (!catalogue) return null;
  const custom = await repo.findCustomDefinitions(ctx.db, ws, objectType);
  const extraOptions = new Map<string, OptionDef[]>();
  for (const o of custom.options) {
    const list = extraOptions.get(o.field_key) ?? [];
    list.push({ id: o.id, label: o.label, description: o.description });
    extraOptions.set(o.field_key, list);
  }
  const seed = (kind: string, key: string) => `${ws}/${objectType}/${kind}/${key}`;
  const fields = new Map<string, FieldDef>();
  for (const [key, f] of Object.entries(catalogue.fields)) {
    const defaults = (f.options ?? []).map((label) => ({ id: derivedId('opt', seed('option', `${key}/${label}`)), label, description: null }));
    fields.set(key, {
      id: derivedId('fld', seed('field', key)),
      key,
      label: f.label,
      description: null,
      valueType: f.valueType,
      readOnly: f.readOnly ?? false,
      required: f.required ?? false,
      system: true,
      multipleValues: f.multipleValues ?? false,
      unique: false,
      currency: null,
      handleService: f.handleService ?? null,
      options: SELECTS.has(f.valueType) ? [...defaults, ...(extraOptions.get(key) ?? [])] : null,
      values: f.values ?? null,
      defaultCountry: null,
    });
  }
  const archived = new Map<string, FieldDef>();
  for (const row of custom.fields) {
    const config = JSON.parse(row.config) as {
      currency?: string;
      unique?: boolean;
      multipleValues?: boolean;
      handleService?: HandleService;
      defaultCountry?: string;
      archived?: boolean;
    };
    // An archived field is hidden from definitions, responses, filters and writes; its values stay (docs/records.md §Correcting definitions).
    const valueType = row.value_type as ValueType;
    (config.archived ? archived : fields).set(row.key, {
      id: row.id,
      key: row.key,
      label: row.label,
      description: row.description,
      valueType,
      readOnly: false,
      required: false,
      system: false,
      multipleValues: config.multipleValues ?? false,
      unique: config.unique ?? false,
      currency: config.currency ?? null,
      handleService: config.handleService ?? null,
      options: SELECTS.has(valueType) ? (extraOptions.get(row.key) ?? []) : null,
      values: null,
      defaultCountry: config.defaultCountry ?? null,
    });
  }
  // A TELEPHONE field without a country of its own takes the workspace's.
  const phones = [...fields.values(), ...archived.values()].filter((f) => f.valueType === 'TELEPHONE' && f.defaultCountry === null);
  if (phones.length > 0) {
    const country = await repo.workspaceDefaultCountry(ctx.db, ws);
    for (const f of phones) f.defaultCountry = country;
  }
  const relationships = new Map<string, RelationshipDef>();
  for (const [key, r] of Object.entries(catalogue.relationships)) {
    relationships.set(key, { id: derivedId('rld', seed('relationship', key)), key, description: null, required: r.required ?? false, system: true, ...r });
  }
  for (const row of custom.relationships) {
    relationships.set(row.key, {
      id: row.id,
      key: row.key,
      label: row.label,
      description: row.description,
      cardinality: row.cardinality,
      objectType: row.target_type,
      writable: 'yes',
      required: false,
      system: false,
      storage: { kind: 'own' },
    });
  }
  return { objectType, fields, relationships, archived };
}

const MULTI_CAPABLE = new Set<ValueType>(['EMAIL', 'URL', 'TELEPHONE', 'SOCIAL_HANDLE']);
// A unique value is compared whole through one row of the value index; an ADDRESS has a row per
// part and a FULL_NAME's object is never looked up, so neither could hold `unique`.
const NEVER_UNIQUE = new Set<ValueType>(['ADDRESS', 'FULL_NAME']);
// The codes of ISO 4217's current list that ICU has no data for, so leaves out of its currencies:
// funds (Chile's CLF, Uruguay's UYI), precious metals (XAU), bond units, testing and no-currency
// codes, and Venezuela's VED.
const ISO_BEYOND_ICU = 'BOV CHE CHW CLF COU MXV USN UYI UYW VED XAG XAU XBA XBB XBC XBD XPD XPT XTS XUA XXX'.split(' ');
let currencies: ReadonlySet<string> | undefined;

/**
 * Whether `code` is a currency as a CURRENCY field's definition holds it: an ISO 4217 code in
 * upper case that exists (`EUR`, `CLF`; `ZZZ`, a typo, is none): one the runtime's ICU knows, or
 * one of ISO 4217's that ICU leaves out (docs/records.md §Definitions).
 */
export function isCurrencyCode(code: string): boolean {
  currencies ??= new Set([...Intl.supportedValuesOf('currency'), ...ISO_BEYOND_ICU]);
  return /^[A-Z]{3}$/.test(code) && currencies.has(code);
}

export interface AddFieldInput {
  objectType: string;
  key: string;
  label: string;
  description?: string | null;
  valueType: ValueType;
  currency?: string;
  unique?: boolean;
  multipleValues?: boolean;
  handleService?: HandleService;
  /** TELEPHONE only: ISO 3166-1 alpha-2 code of the country national numbers are read in. */
  defaultCountry?: string;
  /** Added archived (an import of an export, docs/import.md §definition). */
  archived?: boolean;
}

async function requireType(ctx: Ctx, objectType: string): Promise<TypeDefinitions> {
  const defs = await loadDefinitions(ctx, { objectType });
  if (!defs) throw new InputError(`unknown object type "${objectType}"`, 'objectType');
  return defs;
}

/**
 * Runs a definition write in the caller's transaction, or in one of its own, holding the
 * workspace's definitions lock from before its checks until it commits: what it checks (a taken
 * key, a clashing label) then includes what any other writer (an operator, an import) wrote before
 * it, so two such writes at once end as if run one after the other (docs/records.md §Definitions).
 */
export function definitionWrite<T>(ctx: Ctx, fn: (ctx: WriteCtx) => Promise<T>): Promise<T> {
  return inWrite(ctx.db, async (tx) => {
    await repo.lockDefinitions(tx, ctx.actor.workspaceId);
    return fn({ ...ctx, db: tx });
  });
}

/** Whether operators may add fields or relationships to the type (notes take neither, tasks only relationships). */
function allowsCustom(objectType: string, what: 'fields' | 'relationships'): void {
  const custom = SYSTEM_CATALOGUES[objectType]?.custom;
  if (custom && !custom[what]) throw new InputError(`${objectType} takes no custom ${what}`, 'objectType');
}

/**
 * What a new custom field or relationship must be, whichever it is: of a type that takes it, with
 * a label in bounds, and under a key of the custom pattern that no field (archived or not) or
 * relationship of the type holds, as they share keys.
 */
async function checkNewDefinition(
  ctx: Ctx,
  input: { objectType: string; key: string; label: string; description?: string | null },
  what: 'fields' | 'relationships',
): Promise<void> {
  const defs = await requireType(ctx, input.objectType);
  allowsCustom(input.objectType, what);
  checkLabel(input.label, input.description);
  if (!CUSTOM_KEY.test(input.key)) throw new InputError('must match ^[a-z][a-z0-9_]{0,62}$', 'key');
  if (defs.fields.has(input.key) || defs.archived.has(input.key) || defs.relationships.has(input.key))
    throw new InputError(`"${input.key}" is already defined`, 'key');
}

/** A custom field (operators only: the CLI and the import kind `definition`). */
export function addField(ctx: Ctx, given: AddFieldInput): Promise<FieldDef> {
  const input = outerSpaceless(given);
  return definitionWrite(ctx, async (ctx) => {
    await checkNewDefinition(ctx, input, 'fields');
    if (input.unique && NEVER_UNIQUE.has(input.valueType)) throw new InputError('ADDRESS and FULL_NAME fields cannot be unique', 'unique');
    if (input.multipleValues && !MULTI_CAPABLE.has(input.valueType))
      throw new InputError('only EMAIL, URL, TELEPHONE and SOCIAL_HANDLE fields take multipleValues', 'multipleValues');
    if (input.currency !== undefined && (input.valueType !== 'CURRENCY' || !isCurrencyCode(input.currency)))
      throw new InputError('a three-letter ISO 4217 code, for CURRENCY fields only', 'currency');
    if (input.handleService !== undefined && input.valueType !== 'SOCIAL_HANDLE') throw new InputError('for SOCIAL_HANDLE fields only', 'handleService');
    if (input.defaultCountry !== undefined && (input.valueType !== 'TELEPHONE' || !isPhoneCountry(input.defaultCountry.toUpperCase())))
      throw new InputError('an ISO 3166-1 alpha-2 country code such as "DE", for TELEPHONE fields only', 'defaultCountry');
    const config = {
      currency: input.currency,
      unique: input.unique || undefined,
      multipleValues: input.multipleValues || undefined,
      handleService: input.handleService,
      defaultCountry: input.defaultCountry?.toUpperCase(),
      archived: input.archived || undefined,
    };
    const row = {
      id: newId('fld', ctx.now),
      workspace_id: ctx.actor.workspaceId,
      object_type: input.objectType,
      key: input.key,
      label: input.label,
      description: input.description ?? null,
      value_type: input.valueType,
      config: JSON.stringify(config),
      created_at: isoNow(ctx.now),
    };
    await repo.insertField(ctx.db, row);
    const added = await requireType(ctx, input.objectType);
    return (added.fields.get(input.key) ?? added.archived.get(input.key)) as FieldDef;
  });
}

/** A select option added to a system or custom select field, archived or not. */
export function addOption(ctx: Ctx, given: { objectType: string; fieldKey: string; label: string; description?: string | null }): Promise<OptionDef> {
  const input = outerSpaceless(given);
  return definitionWrite(ctx, async (ctx) => {
    const defs = await requireType(ctx, input.objectType);
    const field = defs.fields.get(input.fieldKey) ?? defs.archived.get(input.fieldKey);
    if (!field?.options) throw new InputError(`"${input.fieldKey}" is not a select field of ${input.objectType}`, 'field');
    checkLabel(input.label, input.description);
    const clash = clashingOption(field.options, input.label);
    if (clash) throw new InputError(clashMessage(input.label, clash), 'label');
    const option = { id: newId('opt', ctx.now), label: input.label, description: input.description ?? null };
    await repo.insertOption(ctx.db, { ...option, workspace_id: ctx.actor.workspaceId, object_type: input.objectType, field_key: input.fieldKey });
    return option;
  });
}

/** A custom relationship from `objectType` to `targetType`, stored on this side. */
export function addRelationship(
  ctx: Ctx,
  given: { objectType: string; key: string; label: string; description?: string | null; cardinality: 'has_one' | 'has_many'; targetType: string },
): Promise<RelationshipDef> {
  const input = outerSpaceless(given);
  return definitionWrite(ctx, async (ctx) => {
    await checkNewDefinition(ctx, input, 'relationships');
    if (!isSystemType(input.targetType) && input.targetType !== 'member' && !(await repo.findObjectType(ctx.db, ctx.actor.workspaceId, input.targetType)))
      throw new InputError(`unknown object type "${input.targetType}"`, 'targetType');
    await repo.insertRelationship(ctx.db, {
      id: newId('rld', ctx.now),
      workspace_id: ctx.actor.workspaceId,
      object_type: input.objectType,
      key: input.key,
      label: input.label,
      description: input.description ?? null,
      cardinality: input.cardinality,
      target_type: input.targetType,
      created_at: isoNow(ctx.now),
    });
    return (await requireType(ctx, input.objectType)).relationships.get(input.key) as RelationshipDef;
  });
}
