// Relationships of a create or update, checked against the type's definitions (docs/records.md
// §Writing relationships): keys first, then the shape of each operation. Ids are checked against
// the workspace afterwards (checkIds), and the new sets are computed against what is stored (plan).
import type { RelationshipDef, TypeDefinitions } from '../definitions/service.ts';
import { AppError } from '../lib/errors.ts';
import { withArticle } from './write-fields.ts';
import { longerThan } from '../lib/chars.ts';

const MAX_IDS = 1000;

/** Ids with the param of each; a duplicate collapses onto its first place. */
export type Ids = Map<string, string>;

export interface RelationshipWrite {
  def: RelationshipDef;
  /** The complete new set (create, replace); null clears. Absent: add and remove apply. */
  replace?: Ids | null;
  add: Ids;
  remove: Ids;
}

function asObject(v: unknown, param: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AppError('invalid_type', `"${param}" must be an object.`, { param });
  return v as Record<string, unknown>;
}

/** An id of 1 to 255 characters, as every id in a path (docs/errors.md §Lengths), at `param`. */
function boundedId(id: string, param: string): string {
  if (id.length < 1 || longerThan(id, 255)) throw new AppError('invalid_value', `"${param}" must be 1 to 255 characters.`, { param });
  return id;
}

/** A string or an array of strings, as ids with their params; a lone id is bounded as one in an array. */
function ids(v: unknown, param: string): Ids {
  const out: Ids = new Map();
  if (typeof v === 'string') return out.set(boundedId(v, param), param);
  if (!Array.isArray(v)) throw new AppError('invalid_type', `"${param}" must be an id or an array of ids.`, { param });
  if (v.length > MAX_IDS) throw new AppError('invalid_value', `"${param}" holds at most ${MAX_IDS} ids.`, { param });
  v.forEach((id, i) => {
    if (typeof id !== 'string') throw new AppError('invalid_type', `"${param}[${i}]" must be a string.`, { param: `${param}[${i}]` });
    if (!out.has(boundedId(id, `${param}[${i}]`))) out.set(id, `${param}[${i}]`);
  });
  return out;
}

/** The keys of `relationships`: unknown ones, read-only ones (and create-only ones on update). */
export function checkRelationshipKeys(defs: TypeDefinitions, raw: Record<string, unknown>, mode: 'create' | 'update'): void {
  for (const key of Object.keys(raw)) {
    const def = defs.relationships.get(key);
    const param = `relationships.${key}`;
    if (!def) throw new AppError('unknown_relationship', `"${key}" is not a relationship of ${defs.objectType}.`, { param });
    if (def.writable === 'no' || (def.writable === 'create' && mode === 'update'))
      throw new AppError('read_only_relationship', `"${key}" is read-only${def.writable === 'create' ? ' after create' : ''}.`, { param });
  }
}

/** The required relationships a create leaves out, checked after the required fields (checkRequiredFields). */
export function checkRequiredRelationships(defs: TypeDefinitions, raw: Record<string, unknown>): void {
  for (const def of defs.relationships.values()) {
    if (def.required && !Object.hasOwn(raw, def.key))
      throw new AppError('parameter_missing', `"${def.key}" is required to create ${withArticle(defs.objectType)}.`, { param: `relationships.${def.key}` });
  }
}

/** The relationships of a create: each key an id or an array of ids (a has_one exactly one). */
export function checkCreateRelationships(defs: TypeDefinitions, raw: Record<string, unknown>): RelationshipWrite[] {
  return Object.entries(raw).map(([key, v]) => {
    const def = defs.relationships.get(key) as RelationshipDef;
    const param = `relationships.${key}`;
    const set = ids(v, param);
    if (def.cardinality === 'has_one' && set.size !== 1) throw new AppError('invalid_value', `"${key}" is has_one: give exactly one id.`, { param });
    if (def.required && set.size === 0) throw new AppError('invalid_value', `"${key}" is required and cannot be empty.`, { param });
    return { def, replace: set, add: new Map(), remove: new Map() };
  });
}

const OPERATION_KEYS = new Set(['add', 'remove', 'replace']);

const ADD_REMOVE_KEYS = new Set(['add', 'remove']);

/**
 * The relationships of an update: each key an operation object {add, remove} or {replace}; with
 * `addRemove` (notes), {add}, {remove} or both, and replace → unknown_field. The same id in add
 * and remove → conflicting_membership_change.
 */
export function checkUpdateRelationships(defs: TypeDefinitions, raw: Record<string, unknown>, operations: 'any' | 'addRemove' = 'any'): RelationshipWrite[] {
  const known = operations === 'addRemove' ? ADD_REMOVE_KEYS : OPERATION_KEYS;
  return Object.entries(raw).map(([key, v]) => {
    const def = defs.relationships.get(key) as RelationshipDef;
    const param = `relationships.${key}`;
    const op = asObject(v, param);
    for (const k of Object.keys(op))
      if (!known.has(k)) throw new AppError('unknown_field', `"${param}.${k}" is not ${[...known].join(', ')}.`, { param: `${param}.${k}` });
    const has = (k: string) => Object.hasOwn(op, k);
    if (!has('add') && !has('remove') && !has('replace')) throw new AppError('parameter_missing', `"${param}" needs ${[...known].join(' or ')}.`, { param });
    if (has('replace') && (has('add') || has('remove')))
      throw new AppError('invalid_value', `"${param}": replace cannot be combined with add or remove.`, { param: `${param}.replace` });
    if (has('replace')) {
      const set = op.replace === null ? null : ids(op.replace, `${param}.replace`);
      if (set && def.cardinality === 'has_one' && set.size > 1)
        throw new AppError('invalid_value', `"${key}" is has_one: replace takes one id.`, { param: `${param}.replace` });
      return { def, replace: set, add: new Map(), remove: new Map() };
    }
    const add = has('add') ? ids(op.add, `${param}.add`) : new Map<string, string>();
    const remove = has('remove') ? ids(op.remove, `${param}.remove`) : new Map<string, string>();
    for (const [id, at] of remove)
      if (add.has(id)) throw new AppError('conflicting_membership_change', `"${id}" is both added and removed in one request.`, { param: at });
    if (def.cardinality === 'has_one' && add.size > 1) throw new AppError('invalid_value', `"${key}" is has_one: add takes one id.`, { param: `${param}.add` });
    return { def, add, remove };
  });
}

/** Every id a write names, by target type, with the param of its first place. */
export function idsByType(writes: readonly RelationshipWrite[]): Map<string, Ids> {
  const out = new Map<string, Ids>();
  for (const w of writes) {
    const mine = out.get(w.def.objectType) ?? new Map<string, string>();
    out.set(w.def.objectType, mine);
    for (const set of [w.replace ?? new Map<string, string>(), w.add, w.remove]) for (const [id, p] of set) if (!mine.has(id)) mine.set(id, p);
  }
  return out;
}

/**
 * The new set of one relationship from the stored one. has_one: add while another id is set, or
 * emptying a required one that holds ids (by remove or replace), is invalid_value. Adding a linked
 * id or removing an unlinked one does nothing.
 */
export function plan(w: RelationshipWrite, current: readonly string[]): string[] {
  const param = `relationships.${w.def.key}`;
  let next: string[];
  if (w.replace !== undefined) next = w.replace === null ? [] : [...w.replace.keys()];
  else {
    const removed = new Set(w.remove.keys());
    next = current.filter((id) => !removed.has(id));
    for (const id of w.add.keys()) if (!next.includes(id)) next.push(id);
  }
  if (w.def.cardinality === 'has_one' && next.length > 1)
    throw new AppError('invalid_value', `"${w.def.key}" is has_one and already set: use replace, or remove it first.`, { param: `${param}.add` });
  // A record that holds none (a task imported without an assignee) is not emptied by a remove or
  // by a replace with none, which then change nothing, as removing an unlinked id does
  // (docs/records.md §Writing relationships). A create's empty set is refused before this.
  if (w.def.required && next.length === 0 && current.length > 0)
    throw new AppError('invalid_value', `"${w.def.key}" is required and cannot be emptied.`, {
      param: `${param}.${w.replace !== undefined ? 'replace' : 'remove'}`,
    });
  return next;
}
