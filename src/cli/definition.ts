// `rolodex definition`: operators define custom object types, add custom fields, relationships and
// select options and list a type's definitions (docs/records.md §Definitions, docs/activities.md
// §Custom objects); there is no API for it.
import type { HandleService } from '../definitions/catalogue.ts';
import { renameDefinition, renameOption } from '../definitions/corrections.ts';
import { setArchived } from '../records/service.ts';
import { defineObjectType, listObjectTypes } from '../definitions/object-types.ts';
import { addField, addOption, addRelationship, isCurrencyCode, type FieldDef, loadDefinitions, type RelationshipDef } from '../definitions/service.ts';
import { InputError } from '../lib/errors.ts';
import { VALUE_TYPES, type ValueType } from '../lib/value-types.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import {
  badValue,
  countryCode,
  description,
  type Io,
  oneOf,
  onlyOptionsOf,
  operator,
  optionsOf,
  parse,
  print,
  printable,
  required,
  subcommand,
  UsageError,
  withDb,
} from './io.ts';
import { write } from '../db/index.ts';

export const usage = `rolodex definition add --workspace W --type T --key K --label L --value-type V [--description D] [--currency C] [--unique] [--multiple-values] [--handle-service S] [--default-country CC] [--json]
rolodex definition add --workspace W --type T --key K --label L --relationship --cardinality has_one|has_many --target T [--description D] [--json]
rolodex definition option add --workspace W --type T --field K --label L [--description D] [--json]
rolodex definition rename --workspace W --type T --key K --label L [--description D] [--json]
rolodex definition option rename --workspace W --type T --field K --option LABEL_OR_ID --label L [--json]
rolodex definition archive|unarchive --workspace W --type T --key K [--json]
rolodex definition list --workspace W --type T [--json]
rolodex definition type add --workspace W --slug S --label L [--json]
rolodex definition types --workspace W [--json]
  (T: a system type such as account or task, or the slug of a custom object type)`;

const OPTIONS = {
  workspace: { type: 'string' },
  type: { type: 'string' },
  key: { type: 'string' },
  label: { type: 'string' },
  description: { type: 'string' },
  'value-type': { type: 'string' },
  currency: { type: 'string' },
  unique: { type: 'boolean' },
  'multiple-values': { type: 'boolean' },
  'handle-service': { type: 'string' },
  'default-country': { type: 'string' },
  relationship: { type: 'boolean' },
  cardinality: { type: 'string' },
  target: { type: 'string' },
  field: { type: 'string' },
  slug: { type: 'string' },
  option: { type: 'string' },
} as const;

const CARDINALITIES = ['has_one', 'has_many'] as const;
const HANDLE_SERVICES: readonly HandleService[] = ['TWITTER', 'LINKEDIN', 'FACEBOOK', 'INSTAGRAM'];

function fieldLine(f: FieldDef): string {
  const extra = [f.currency, f.handleService, f.multipleValues ? 'multiple' : null, f.unique ? 'unique' : null, f.readOnly ? 'read-only' : null].filter(
    Boolean,
  );
  const options = f.options ? `  [${f.options.map((o) => printable(o.label)).join(', ')}]` : '';
  return `${f.key}  ${f.valueType}  ${printable(f.label)}${extra.length ? `  (${extra.join(', ')})` : ''}${options}`;
}

const relationshipLine = (r: RelationshipDef) => `${r.key}  ${r.cardinality} ${r.objectType}  ${printable(r.label)}`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['add', 'option', 'list', 'type', 'types', 'rename', 'archive', 'unarchive']);
  const isOption = sub === 'option';
  const isType = sub === 'type';
  // `definition option add|rename` and `definition type add`: the word after is checked as well.
  const [nested, after] = isOption ? subcommand(rest, ['add', 'rename'], sub) : isType ? subcommand(rest, ['add'], sub) : [undefined, rest];
  const { values } = parse(after, OPTIONS);
  // `add` has a line for a field and one for a relationship: each takes only its own options, so
  // that `add --relationship … --unique` does not make a relationship other than the one asked for,
  // nor `add --value-type TEXT … --target account` a field.
  const addsRelationship = values.relationship !== undefined;
  const ofRelationship = (line: string) => line.includes(' --relationship ');
  const forAdd = {
    only: (line: string) => ofRelationship(line) === addsRelationship,
    name: addsRelationship ? 'add --relationship' : 'add',
    hint: (o: string) =>
      !addsRelationship && optionsOf(usage.split('\n').find(ofRelationship) ?? '').includes(o) ? ' (a relationship is added with --relationship)' : '',
  };
  onlyOptionsOf(usage, nested ? `${sub} ${nested}` : sub, values, sub === 'add' ? forAdd : {});
  const workspaceId = required(values, 'workspace');
  const text = (name: string) => values[name] as string | undefined;
  const json = values.json as boolean;
  const inWorkspace = <T>(fn: (ctx: ReturnType<typeof operator>) => Promise<T>) =>
    withDb(io, async (db, config) => {
      const ctx = operator(db, config, workspaceId);
      await requireWorkspace(ctx);
      return fn(ctx);
    });

  if (isType) {
    const input = { slug: required(values, 'slug'), label: required(values, 'label') };
    const t = await inWorkspace((ctx) => defineObjectType(ctx, input));
    print(io, json, t, `defined object type ${t.objectType} (${printable(t.label)})`);
    return;
  }
  if (sub === 'types') {
    const all = await inWorkspace((ctx) => listObjectTypes(ctx));
    print(io, json, all, all.map((t) => `${t.objectType}  ${printable(t.label)}`).join('\n') || 'no custom object types');
    return;
  }
  const objectType = required(values, 'type');
  if (isOption && nested === 'rename') {
    const input = { objectType, fieldKey: required(values, 'field'), option: required(values, 'option'), label: required(values, 'label') };
    const option = await inWorkspace((ctx) => renameOption(ctx, input));
    print(io, json, option, `renamed option ${option.id} of ${objectType} ${input.fieldKey} to "${printable(option.label)}"`);
  } else if (sub === 'rename') {
    const input = {
      objectType,
      key: required(values, 'key'),
      label: required(values, 'label'),
      ...(description(values) !== undefined ? { description: description(values) } : {}),
    };
    const def = await inWorkspace((ctx) => renameDefinition(ctx, input));
    print(io, json, def, `renamed ${objectType} ${input.key} (${def.id}) to "${printable(def.label)}"`);
  } else if (sub === 'archive' || sub === 'unarchive') {
    const input = { objectType, key: required(values, 'key'), archived: sub === 'archive' };
    // Run again when PostgreSQL cancels it to end a deadlock with a record write it waits for.
    const def = await inWorkspace((ctx) => write(ctx.db, (tx) => setArchived({ ...ctx, db: tx }, input), { rerun: () => undefined }));
    print(io, json, def, `${sub}d ${objectType} ${input.key} (${def.id})`);
  } else if (isOption) {
    const input = { objectType, fieldKey: required(values, 'field'), label: required(values, 'label'), description: description(values) ?? null };
    const option = await inWorkspace((ctx) => addOption(ctx, input));
    print(io, json, option, `added option ${option.id} "${printable(option.label)}" to ${objectType} ${input.fieldKey}`);
  } else if (sub === 'add') {
    const base = { objectType, key: required(values, 'key'), label: required(values, 'label'), description: description(values) ?? null };
    if (values.relationship) {
      const cardinality = oneOf('cardinality', required(values, 'cardinality'), CARDINALITIES) as (typeof CARDINALITIES)[number];
      const input = { ...base, cardinality, targetType: required(values, 'target') };
      const def = await inWorkspace((ctx) => addRelationship(ctx, input));
      print(io, json, def, `added relationship ${def.id}: ${objectType} ${relationshipLine(def)}`);
    } else {
      const valueType = oneOf('value-type', required(values, 'value-type'), VALUE_TYPES) as ValueType;
      const handleService = oneOf('handle-service', values['handle-service'], HANDLE_SERVICES);
      const currency = text('currency');
      if (currency !== undefined && !isCurrencyCode(currency)) throw badValue('currency', currency, 'a three-letter ISO 4217 code such as EUR');
      const defaultCountry = countryCode('default-country', text('default-country'));
      const input = {
        ...base,
        valueType,
        ...(currency !== undefined ? { currency } : {}),
        ...(handleService !== undefined ? { handleService } : {}),
        ...(defaultCountry !== undefined ? { defaultCountry } : {}),
        unique: values.unique === true,
        multipleValues: values['multiple-values'] === true,
      };
      const def = await inWorkspace((ctx) => addField(ctx, input));
      print(io, json, def, `added field ${def.id}: ${objectType} ${fieldLine(def)}`);
    }
  } else if (sub === 'list') {
    const defs = await inWorkspace((ctx) => loadDefinitions(ctx, { objectType }));
    if (!defs) throw new InputError(`unknown object type "${objectType}"`, 'type');
    // Archived fields leave records, not operators (docs/records.md §Correcting definitions): they
    // are listed apart, so that an operator finds the key to unarchive, rename or add options to.
    const archived = [...defs.archived.values()];
    const out = { objectType, fields: [...defs.fields.values()], relationships: [...defs.relationships.values()], archived };
    const human = ['fields:', ...out.fields.map((f) => `  ${fieldLine(f)}`), 'relationships:', ...out.relationships.map((r) => `  ${relationshipLine(r)}`)];
    if (archived.length > 0) human.push('archived fields:', ...archived.map((f) => `  ${fieldLine(f)}`));
    print(io, json, out, human.join('\n'));
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
