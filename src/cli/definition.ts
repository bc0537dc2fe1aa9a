// `rolodex definition …`: what operators define (docs/activities.md §Custom objects, docs/records.md
// §Definitions): custom object types, custom fields and relationships, select options. No API
// operation changes a definition.
import { defineObjectType, listObjectTypes } from '../definitions/object-types.ts';
import { addField, addOption, addRelationship } from '../definitions/service.ts';
import { InputError } from '../lib/errors.ts';
import { VALUE_TYPES, type ValueType } from '../lib/resource-schemas.ts';
import { type Io, operator, parse, print, required, UsageError, withDb } from './io.ts';

export const usage = `rolodex definition add-type --workspace W --slug S --label L [--json]
rolodex definition types --workspace W [--json]
rolodex definition add-field --workspace W --type T --key K --label L --value-type V [--description D] [--currency C] [--unique] [--multiple] [--json]
rolodex definition add-relationship --workspace W --type T --key K --label L --target T2 [--cardinality has_one|has_many] [--description D] [--json]
rolodex definition add-option --workspace W --type T --field K --label L [--description D] [--json]
  (T: a system type such as account or task, or the slug of a custom object type)`;

function valueType(v: string): ValueType {
  const found = VALUE_TYPES.find((t) => t === v);
  if (!found) throw new InputError(`unknown value type "${v}"; one of ${VALUE_TYPES.join(', ')}`, 'value-type');
  return found;
}

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, {
    workspace: { type: 'string' },
    slug: { type: 'string' },
    label: { type: 'string' },
    type: { type: 'string' },
    key: { type: 'string' },
    field: { type: 'string' },
    target: { type: 'string' },
    cardinality: { type: 'string' },
    description: { type: 'string' },
    'value-type': { type: 'string' },
    currency: { type: 'string' },
    unique: { type: 'boolean' },
    multiple: { type: 'boolean' },
  });
  const json = values.json as boolean | undefined;
  const workspaceId = required(values, 'workspace');
  const description = (values.description as string | undefined) ?? null;
  const inWorkspace = <T>(fn: (ctx: ReturnType<typeof operator>) => Promise<T>) => withDb(io, (db, config) => fn(operator(db, config, workspaceId)));
  if (sub === 'add-type') {
    const t = await inWorkspace((ctx) => defineObjectType(ctx, { slug: required(values, 'slug'), label: required(values, 'label') }));
    print(io, json, t, `defined object type ${t.objectType} (${t.label})`);
  } else if (sub === 'types') {
    const all = await inWorkspace((ctx) => listObjectTypes(ctx));
    print(io, json, all, all.map((t) => `${t.objectType}  ${t.label}`).join('\n') || 'no custom object types');
  } else if (sub === 'add-field') {
    const f = await inWorkspace((ctx) =>
      addField(ctx, {
        objectType: required(values, 'type'),
        key: required(values, 'key'),
        label: required(values, 'label'),
        description,
        valueType: valueType(required(values, 'value-type')),
        ...(values.currency ? { currency: values.currency as string } : {}),
        unique: values.unique === true,
        multipleValues: values.multiple === true,
      }),
    );
    print(io, json, f, `added field ${f.key} (${f.valueType}) ${f.id}`);
  } else if (sub === 'add-relationship') {
    const cardinality = (values.cardinality as string | undefined) ?? 'has_many';
    if (cardinality !== 'has_one' && cardinality !== 'has_many') throw new UsageError('--cardinality is has_one or has_many');
    const r = await inWorkspace((ctx) =>
      addRelationship(ctx, {
        objectType: required(values, 'type'),
        key: required(values, 'key'),
        label: required(values, 'label'),
        description,
        cardinality,
        targetType: required(values, 'target'),
      }),
    );
    print(io, json, r, `added relationship ${r.key} (${r.cardinality} ${r.objectType}) ${r.id}`);
  } else if (sub === 'add-option') {
    const o = await inWorkspace((ctx) =>
      addOption(ctx, { objectType: required(values, 'type'), fieldKey: required(values, 'field'), label: required(values, 'label'), description }),
    );
    print(io, json, o, `added option ${o.label} ${o.id}`);
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}
