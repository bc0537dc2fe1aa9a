// Checks shared by the import kinds whose lines carry `fields` of `{value, valueType}` and a
// relationship to files (messages, e-mails): one wording of each error, one `param` per place.
import { InputError } from '../lib/errors.ts';
import { longerThan } from '../lib/chars.ts';

/** `fields[name]` as `{value, valueType}`, with its valueType one of `types[name]`. */
export function typedField(
  fields: Record<string, unknown>,
  types: Record<string, readonly string[]>,
  name: string,
): { value: unknown; valueType: string | undefined } | undefined {
  const f = fields[name];
  if (f === undefined) return undefined;
  const where = `fields.${name}`;
  if (typeof f !== 'object' || f === null || Array.isArray(f)) throw new InputError('must be an object {value, valueType}', where);
  const { value, valueType, ...rest } = f as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InputError('is not a known field', `${where}.${extra}`);
  const allowed = types[name] ?? [];
  if (valueType !== undefined && !allowed.includes(valueType as string)) throw new InputError(`must be ${allowed.join(' or ')}`, `${where}.valueType`);
  return { value, valueType: valueType as string | undefined };
}

/** An optional string of at most `max` characters. */
export function optionalText(where: string, v: unknown, max: number): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new InputError('must be a string', where);
  if (longerThan(v, max)) throw new InputError(`must be at most ${max} characters`, where);
  return v;
}

/**
 * The line's only importable relationship, `name`, as `{objectType: "file", values: [externalId…]}`:
 * the distinct file externalIds, or null when the line has none.
 */
export function fileRelationship(raw: Record<string, unknown>, name: string, of: string): string[] | null {
  const rels = raw.relationships;
  if (rels === undefined || rels === null) return null;
  if (typeof rels !== 'object' || Array.isArray(rels)) throw new InputError('must be an object', 'relationships');
  for (const k of Object.keys(rels)) if (k !== name) throw new InputError(`is not an importable relationship of ${of} (only ${name})`, `relationships.${k}`);
  const where = `relationships.${name}`;
  const r = (rels as Record<string, unknown>)[name];
  if (r === undefined) return null;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new InputError('must be an object {objectType, values}', where);
  const { objectType, values, ...rest } = r as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InputError('is not a known field', `${where}.${extra}`);
  if (objectType !== undefined && objectType !== 'file') throw new InputError('must be "file"', `${where}.objectType`);
  if (!Array.isArray(values)) throw new InputError('must be an array of file externalIds', `${where}.values`);
  values.forEach((v, i) => {
    if (typeof v !== 'string' || v.length === 0) throw new InputError('must be a file externalId', `${where}.values[${i}]`);
  });
  return [...new Set(values as string[])];
}
