// The `definition` import kind (docs/import.md §definition): custom object types, custom fields,
// custom relationships and select options, matched by slug, by type and key (options by field and
// label), so that importing the same definitions again changes nothing and a different one under
// a taken key is refused.
import { type ImportContext, ImportError, type ImportItem, type ImportKind, onlyFields, str } from '../import/kind.ts';
import { describeOption, renameDefinition } from './corrections.ts';
import { InputError } from '../lib/errors.ts';
import { VALUE_TYPES, type ValueType } from '../lib/value-types.ts';
import type { HandleService } from './catalogue.ts';
import { defineObjectType, findObjectType, relabelObjectType } from './object-types.ts';
import { findFieldRow } from './repository.ts';
import { clashingOption, clashMessage } from './labels.ts';
import { type AddFieldInput, addField, addOption, addRelationship, loadDefinitions, type TypeDefinitions } from './service.ts';
import { longerThan } from '../lib/chars.ts';

const HANDLE_SERVICES = ['TWITTER', 'LINKEDIN', 'FACEBOOK', 'INSTAGRAM'];

export type DefinitionInput =
  | { definition: 'field'; field: AddFieldInput; options: OptionInput[] }
  | {
      definition: 'relationship';
      relationship: { objectType: string; key: string; label: string; description?: string | null; cardinality: 'has_one' | 'has_many'; targetType: string };
    }
  | { definition: 'option'; option: { objectType: string; fieldKey: string; label: string; description?: string | null } }
  | { definition: 'type'; type: { slug: string; label: string } };

function oneOf<T extends string>(raw: Record<string, unknown>, field: string, allowed: readonly T[], required = true): T | undefined {
  const v = str(raw, field, { required });
  if (v !== null && !(allowed as readonly string[]).includes(v)) throw new InputError(`must be one of ${allowed.join(', ')}`, field);
  return (v ?? undefined) as T | undefined;
}

function flag(raw: Record<string, unknown>, field: string): boolean {
  const v = raw[field];
  if (v !== undefined && v !== null && typeof v !== 'boolean') throw new InputError('must be true or false', field);
  return v === true;
}

/** An option of a field line: its label, and its description where the line gives one. */
interface OptionInput {
  label: string;
  description?: string | null;
}

/** `options` of a field line: labels, or `{label, description?}` for an option with a description. */
function options(raw: Record<string, unknown>): OptionInput[] {
  const v = raw.options ?? [];
  if (!Array.isArray(v)) throw new InputError('must be an array of option labels', 'options');
  const out = v.map((x: unknown, i): OptionInput => {
    if (typeof x === 'string') return { label: x.trim() };
    if (x === null || typeof x !== 'object' || Array.isArray(x)) throw new InputError('must be a label or an object {label, description}', `options[${i}]`);
    const o = x as Record<string, unknown>;
    for (const k of Object.keys(o)) if (k !== 'label' && k !== 'description') throw new InputError('is not a known field', `options[${i}].${k}`);
    if (typeof o.label !== 'string') throw new InputError('must be a string', `options[${i}].label`);
    if (o.description !== undefined && o.description !== null && (typeof o.description !== 'string' || longerThan(o.description, 10_000)))
      throw new InputError('must be a string of at most 10,000 characters, or null', `options[${i}].description`);
    return { label: o.label.trim(), ...(o.description !== undefined ? { description: o.description } : {}) };
  });
  out.forEach(({ label }, i) => {
    if (label.length < 1 || longerThan(label, 255)) throw new InputError('must be a string of 1 to 255 characters', `options[${i}]`);
    // Labels equal but for case or white space would name one option ambiguously (clashingOption).
    const clash = clashingOption(
      out.slice(0, i).map((o, j) => ({ id: `options[${j}]`, label: o.label, description: null })),
      label,
    );
    if (clash?.label === label) throw new InputError(`"${label}" appears twice`, `options[${i}]`);
    if (clash) throw new InputError(`${clashMessage(label, clash)} (${clash.id})`, `options[${i}]`);
  });
  return out;
}

/**
 * A member the line may spell either way: the import format's (`decided`, docs/import.md
 * §definition) or the one earlier releases wrote (`earlier`), which stays accepted; the value of the
 * one given, named by it in errors.
 */
function spelled(raw: Record<string, unknown>, decided: string, earlier: string): string {
  if (raw[decided] !== undefined && raw[earlier] !== undefined) throw new InputError(`give "${decided}" or "${earlier}", not both`, earlier);
  return raw[earlier] !== undefined ? earlier : decided;
}

/** A relationship's cardinality, in the definitions' upper case or the records' lower case. */
function cardinality(raw: Record<string, unknown>): 'has_one' | 'has_many' {
  const v = oneOf(raw, 'cardinality', ['HAS_ONE', 'HAS_MANY', 'has_one', 'has_many'] as const) as string;
  return v.toLowerCase() as 'has_one' | 'has_many';
}

function check(raw: Record<string, unknown>): DefinitionInput {
  const given = oneOf(raw, 'definition', ['objectType', 'field', 'relationship', 'option', 'type'] as const);
  const kind = given === 'objectType' ? 'type' : (given as 'type' | 'field' | 'relationship' | 'option');
  if (kind === 'type') {
    onlyFields(raw, ['definition', 'slug', 'label']);
    return {
      definition: 'type',
      type: { slug: str(raw, 'slug', { required: true }) as string, label: (str(raw, 'label', { required: true, max: 255 }) as string).trim() },
    };
  }
  const objectType = str(raw, 'objectType', { required: true }) as string;
  // Absent, the description is left as stored; null clears it (docs/import.md §definition).
  const description = raw.description === undefined ? undefined : str(raw, 'description', { max: 10_000 });
  // Stored without outer white space, as the CLI stores it (outerSpaceless).
  const label = (str(raw, 'label', { required: true, max: 255 }) as string).trim();
  if (kind === 'option') {
    onlyFields(raw, ['definition', 'objectType', 'field', 'label', 'description']);
    return { definition: 'option', option: { objectType, fieldKey: str(raw, 'field', { required: true }) as string, label, description } };
  }
  const key = str(raw, 'key', { required: true }) as string;
  if (kind === 'relationship') {
    onlyFields(raw, ['definition', 'objectType', 'key', 'label', 'description', 'cardinality', 'targetObjectType', 'targetType']);
    const target = spelled(raw, 'targetObjectType', 'targetType');
    return {
      definition: 'relationship',
      relationship: { objectType, key, label, description, cardinality: cardinality(raw), targetType: str(raw, target, { required: true }) as string },
    };
  }
  onlyFields(raw, [
    'definition',
    'objectType',
    'key',
    'label',
    'description',
    'valueType',
    'currency',
    'unique',
    'multipleValues',
    'handleService',
    'defaultCountry',
    'options',
    'archived',
  ]);
  const valueType = oneOf(raw, 'valueType', VALUE_TYPES) as ValueType;
  const currency = str(raw, 'currency') ?? undefined;
  const handleService = oneOf(raw, 'handleService', HANDLE_SERVICES, false) as HandleService | undefined;
  const field = {
    objectType,
    key,
    label,
    description,
    valueType,
    unique: flag(raw, 'unique'),
    multipleValues: flag(raw, 'multipleValues'),
    archived: flag(raw, 'archived'),
  };
  const listed = options(raw);
  if (listed.length > 0 && valueType !== 'SINGLE_SELECT' && valueType !== 'MULTI_SELECT')
    throw new InputError('for SINGLE_SELECT and MULTI_SELECT fields only', 'options');
  const defaultCountry = str(raw, 'defaultCountry') ?? undefined;
  return {
    definition: 'field',
    field: { ...field, ...(currency ? { currency } : {}), ...(handleService ? { handleService } : {}), ...(defaultCountry ? { defaultCountry } : {}) },
    options: listed,
  };
}

/** A taken key or label must hold exactly what the line asks for. */
function same(line: number, what: string, pairs: Array<[string, unknown, unknown]>): void {
  for (const [field, have, want] of pairs)
    if (have !== want) throw new ImportError(line, field, `${what} exists with ${field} ${JSON.stringify(have)}, not ${JSON.stringify(want)}`);
}

async function ownDefaultCountry(ctx: ImportContext, objectType: string, key: string): Promise<string | null> {
  const row = await findFieldRow(ctx.db, ctx.actor.workspaceId, objectType, key);
  return row ? ((JSON.parse(row.config) as { defaultCountry?: string }).defaultCountry ?? null) : null;
}

async function apply(ctx: ImportContext, item: ImportItem<DefinitionInput>, defs: (type: string) => Promise<TypeDefinitions>): Promise<string> {
  const { line, value: v } = item;
  if (v.definition === 'type') {
    const existing = await findObjectType(ctx, v.type.slug);
    if (!existing) return (await defineObjectType(ctx, v.type, { imported: true })).objectType;
    // Another label corrects it in place, as a field's does (docs/import.md §definition).
    if (existing.label !== v.type.label) await relabelObjectType(ctx, v.type);
    return existing.objectType;
  }
  if (v.definition === 'field') {
    const f = v.field;
    const d = await defs(f.objectType);
    let def = d.fields.get(f.key) ?? d.archived.get(f.key);
    if (def?.system) throw new ImportError(line, 'key', `"${f.key}" is a system field of ${f.objectType}; add options to it with definition "option"`);
    if (def) {
      const pairs: Array<[string, unknown, unknown]> = [
        ['valueType', def.valueType, f.valueType],
        ['currency', def.currency, f.currency ?? null],
        ['unique', def.unique, f.unique],
        ['multipleValues', def.multipleValues, f.multipleValues],
        ['handleService', def.handleService, f.handleService ?? null],
        // The field's own country, not the workspace's that its definition falls back to.
        ['defaultCountry', await ownDefaultCountry(ctx, f.objectType, f.key), f.defaultCountry?.toUpperCase() ?? null],
        // Archiving is `rolodex definition archive|unarchive`, which re-indexes (docs/import.md §definition).
        ['archived', d.archived.has(f.key), f.archived],
      ];
      same(line, `field "${f.key}" of ${f.objectType}`, pairs);
      // Label and description are corrected in place, keeping the id (docs/records.md §Correcting
      // definitions); a line without `description` leaves it as stored.
      if (def.label !== f.label || (f.description !== undefined && def.description !== f.description))
        await renameDefinition(ctx, { objectType: f.objectType, key: f.key, label: f.label, description: f.description });
    } else def = await addField(ctx, f);
    for (const [i, o] of v.options.entries()) {
      const existing = def.options?.find((x) => sameLabel(x.label, o.label));
      const clash = existing ? undefined : clashingOption(def.options ?? [], o.label);
      if (clash) throw new ImportError(line, `options[${i}]`, clashMessage(o.label, clash));
      if (!existing) await addOption(ctx, { objectType: f.objectType, fieldKey: f.key, label: o.label, description: o.description ?? null });
      // A label alone says nothing of the description; a description given corrects it.
      else if (o.description !== undefined && o.description !== existing.description)
        await describeOption(ctx, { optionId: existing.id, description: o.description });
    }
    return def.id;
  }
  if (v.definition === 'relationship') {
    const r = v.relationship;
    const def = (await defs(r.objectType)).relationships.get(r.key);
    if (!def) return (await addRelationship(ctx, r)).id;
    if (def.system) throw new ImportError(line, 'key', `"${r.key}" is a system relationship of ${r.objectType}`);
    const pairs: Array<[string, unknown, unknown]> = [
      ['cardinality', def.cardinality, r.cardinality],
      ['targetObjectType', def.objectType, r.targetType],
    ];
    same(line, `relationship "${r.key}" of ${r.objectType}`, pairs);
    if (def.label !== r.label || (r.description !== undefined && def.description !== r.description))
      await renameDefinition(ctx, { objectType: r.objectType, key: r.key, label: r.label, description: r.description });
    return def.id;
  }
  const o = v.option;
  const d = await defs(o.objectType);
  const existing = (d.fields.get(o.fieldKey) ?? d.archived.get(o.fieldKey))?.options?.find((x) => sameLabel(x.label, o.label));
  if (!existing) return (await addOption(ctx, o)).id;
  // The description is corrected in place, keeping the id (docs/records.md §Correcting
  // definitions); a line without `description` leaves it as stored.
  if (o.description !== undefined && existing.description !== o.description) await describeOption(ctx, { optionId: existing.id, description: o.description });
  return existing.id;
}

export const definitionKind: ImportKind<DefinitionInput> = {
  object: 'definition',
  check,
  // Definitions are matched by key, never referenced by externalId; a line's externalId only
  // names it in the output, and a line without one is named by what it defines, as the export names it.
  nameOf: (v) => {
    if (v.definition === 'type') return `type:${v.type.slug}`;
    if (v.definition === 'field') return `field:${v.field.objectType}:${v.field.key}`;
    if (v.definition === 'relationship') return `relationship:${v.relationship.objectType}:${v.relationship.key}`;
    return `option:${v.option.objectType}:${v.option.fieldKey}:${v.option.label}`;
  },
  lookup: async () => new Map(),
  whole: true,
  async upsert(ctx, items) {
    // Types first, then fields, relationships and options: each may name one of the same file.
    const rank = { type: 0, field: 1, relationship: 2, option: 3 };
    const ordered = [...items].sort((a, b) => rank[a.value.definition] - rank[b.value.definition] || a.line - b.line);
    const defs = async (objectType: string) => {
      const d = await loadDefinitions(ctx, { objectType });
      if (!d) throw new InputError(`unknown object type "${objectType}"`, 'objectType');
      return d;
    };
    // Each definition takes the next position of its type, so the lines keep their order.
    for (const item of ordered) {
      try {
        ctx.register('definition', item.externalId, await apply(ctx, item, defs));
      } catch (err) {
        if (err instanceof InputError && !(err instanceof ImportError)) throw new ImportError(item.line, err.param ?? '(object)', err.message);
        throw err;
      }
    }
  },
};

/**
 * Whether a stored label is the line's (trimmed) one: labels stored before they were trimmed
 * (outerSpaceless) still name their option, so importing the same file again changes nothing.
 */
function sameLabel(stored: string, given: string): boolean {
  return stored === given || stored.trim() === given;
}
