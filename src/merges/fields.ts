// How a merge resolves the primary's fields (docs/merge.md §Fields): a resolution names the
// primary's value, the duplicate's, or a value checked as a write checks it; without one, the
// primary's value when set, else the duplicate's; MULTI_SELECT keeps the primary's set (the union
// with `multiSelectUnion`); multi-valued EMAIL, URL, TELEPHONE and SOCIAL_HANDLE fields take the
// union, the primary's values first, duplicates removed as their filters compare them (an EMAIL
// by its key, docs/records.md §E-mail addresses). An
// archived field keeps the primary's value when set, else takes the duplicate's.
import type { TypeDefinitions } from '../definitions/service.ts';
import { emailKey } from '../lib/email.ts';
import { foldText } from '../lib/fold.ts';
import { AppError } from '../lib/errors.ts';
import { checkFieldKeys, checkFieldValues, heldIn, MAX_VALUES } from '../records/write-fields.ts';

export type Resolution = 'primary' | 'duplicate' | { value: unknown };

const UNION_TYPES = new Set(['EMAIL', 'URL', 'TELEPHONE', 'SOCIAL_HANDLE']);

/** The body member a resolution's errors name. */
const RESOLUTIONS = 'fieldResolutions';

/**
 * Checks every resolution as a write checks its fields, its errors naming `fieldResolutions.<key>`
 * in param and message (docs/errors.md); returns the checked values of `{value}` ones (null: unset).
 * `primary` and `duplicate` are the two records' stored fields: as on an update, a resolution that
 * leaves a required field unset (`{"value": null}`, or `"duplicate"` when the duplicate holds none)
 * is refused only when the primary holds it (docs/merge.md §Fields).
 */
export function checkResolutions(
  defs: TypeDefinitions,
  resolutions: Readonly<Record<string, Resolution>>,
  primary: Readonly<Record<string, unknown>>,
  duplicate: Readonly<Record<string, unknown>>,
): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const holds = heldIn(primary);
  for (const [key, r] of Object.entries(resolutions)) {
    checkFieldKeys(defs, { [key]: null }, RESOLUTIONS);
    if (r === 'duplicate' && defs.fields.get(key)?.required && holds(key) && !heldIn(duplicate)(key))
      throw new AppError('invalid_value', `"${key}" is required and cannot be cleared: the duplicate holds none.`, { param: `${RESOLUTIONS}.${key}` });
    if (typeof r !== 'object') continue;
    try {
      values.set(key, checkFieldValues(defs, { [key]: r.value }, RESOLUTIONS, 'exact', holds).get(key));
    } catch (err) {
      throw err instanceof AppError ? placedInValue(err, `${RESOLUTIONS}.${key}`) : err;
    }
  }
  return values;
}

/**
 * A write's error names a member or item of a field's value below the field (`fields.k.latitude`,
 * `fields.k[1]`); in a resolution that value sits under `value`, so such an error names its place
 * in the body (`fieldResolutions.k.value.latitude`), as every `param` does (docs/errors.md). An
 * error of the value as a whole names the resolution, `fieldResolutions.k` (docs/merge.md §Fields).
 */
function placedInValue(err: AppError, base: string): AppError {
  const param = err.param;
  if (param === undefined || !param.startsWith(base) || !['.', '['].includes(param.charAt(base.length))) return err;
  const placed = `${base}.value${param.slice(base.length)}`;
  return new AppError(err.code, err.message.replaceAll(`"${param}"`, `"${placed}"`), { param: placed, headers: err.headers });
}

function union(a: readonly unknown[], b: readonly unknown[], same: (x: unknown) => unknown): unknown[] {
  const seen = new Set(a.map(same));
  const out = [...a];
  for (const x of b) {
    const k = same(x);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(x);
    }
  }
  return out;
}

/** The primary's stored fields after the merge. */
export function mergeFields(
  defs: TypeDefinitions,
  primary: Readonly<Record<string, unknown>>,
  duplicate: Readonly<Record<string, unknown>>,
  resolutions: Readonly<Record<string, Resolution>>,
  checked: ReadonlyMap<string, unknown>,
  multiSelectUnion: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...primary };
  for (const [key, def] of defs.fields) {
    const has = (o: Readonly<Record<string, unknown>>) => Object.hasOwn(o, key);
    const p = has(primary) ? primary[key] : undefined;
    const d = has(duplicate) ? duplicate[key] : undefined;
    const r = Object.hasOwn(resolutions, key) ? resolutions[key] : undefined;
    let v: unknown;
    if (r === 'primary') v = p;
    else if (r === 'duplicate') v = d;
    else if (r !== undefined) v = checked.get(key) ?? undefined;
    else if (def.readOnly) v = p;
    else if (def.valueType === 'MULTI_SELECT') v = p === undefined ? d : multiSelectUnion && Array.isArray(d) ? union(p as unknown[], d, (x) => x) : p;
    else if (def.multipleValues && UNION_TYPES.has(def.valueType) && (Array.isArray(p) || Array.isArray(d)))
      v = union((p as unknown[] | undefined) ?? [], (d as unknown[] | undefined) ?? [], (x) =>
        typeof x === 'string' ? (def.valueType === 'EMAIL' ? emailKey(x) : foldText(x)) : x,
      );
    else v = p ?? d;
    // A union holds what a write could store, no more: a value no write, update or import takes
    // back is refused here, and the caller picks one side (docs/merge.md §Fields).
    if (Array.isArray(v) && v.length > MAX_VALUES && v !== p)
      throw new AppError(
        'invalid_value',
        `The merged "${key}" would hold ${v.length} values, more than the ${MAX_VALUES} a field holds; choose its value with "${RESOLUTIONS}.${key}".`,
        { param: `${RESOLUTIONS}.${key}` },
      );
    if (v === undefined || v === null) delete out[key];
    else out[key] = v;
  }
  // An archived field takes no resolution and is not shown, but its values are kept for an
  // unarchive (docs/records.md §Correcting definitions): the primary's when set, else the
  // duplicate's.
  for (const key of defs.archived.keys())
    if (Object.hasOwn(duplicate, key) && (duplicate[key] ?? null) !== null && (out[key] ?? null) === null) out[key] = duplicate[key];
  return out;
}
