// The original's OpenAPI document as the wire-conformance check reads it (docs/conformance.md):
// cut to the operations Rolodex serves (matched by method and path template), with every error
// response wrapped in the error envelope of docs/design.md §Errors, and compiled with ajv as the
// JSON Schema 2020-12 dialect OpenAPI 3.1 uses. Nothing of the document is kept in the project;
// its path comes from the command line.
import { readFileSync } from 'node:fs';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const Ajv2020 = ((Ajv2020Module as any).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as typeof addFormatsModule.default;

type Json = Record<string, any>;

export interface CutOperation {
  /** `GET /v1/contacts/{}`: method and path with every parameter written `{}`. */
  key: string;
  method: string;
  /** The path template as Rolodex serves it. */
  path: string;
  ourId: string;
  theirId: string;
  /** status → validator of a response body with that status, or null when the original has no body schema. */
  responses: Map<number, ValidateFunction | null>;
}

export const templateKey = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`;

const escape = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

/** Reads the original's document (JSON; OpenAPI 3.1). */
export function readOriginal(file: string): Json {
  const text = readFileSync(file, 'utf8');
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new Error(`${file}: not JSON (convert a YAML document to JSON first)`);
  }
}

/**
 * The original cut to `ours` (the served /openapi.json): one entry per operation both serve, and
 * the operations only one side has (reported, never checked).
 */
export function cutOriginal(
  original: Json,
  ours: Json,
): { operations: CutOperation[]; onlyOurs: string[]; onlyTheirs: string[]; ourOnly: Array<{ method: string; path: string }> } {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  // The whole document is one schema resource, so `#/components/schemas/…` refs resolve inside it.
  ajv.addSchema({ ...original, $id: 'original' });
  const theirs = new Map<string, { method: string; path: string; op: Json }>();
  for (const [path, item] of Object.entries<Json>(original.paths ?? {}))
    for (const [method, op] of Object.entries<Json>(item))
      if (op && typeof op === 'object' && op.responses) theirs.set(templateKey(method, path), { method, path, op });
  const operations: CutOperation[] = [];
  const onlyOurs: string[] = [];
  const ourOnly: Array<{ method: string; path: string }> = [];
  const served = new Set<string>();
  for (const [path, item] of Object.entries<Json>(ours.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const key = templateKey(method, path);
      served.add(key);
      const their = theirs.get(key);
      if (!their) {
        onlyOurs.push(`${key} (${op.operationId})`);
        ourOnly.push({ method: method.toUpperCase(), path });
        continue;
      }
      const responses = new Map<number, ValidateFunction | null>();
      for (const [status, response] of Object.entries<Json>(their.op.responses)) {
        const code = Number(status);
        if (!Number.isInteger(code)) continue;
        const content = response.content?.['application/json'];
        if (!content?.schema) {
          responses.set(code, null);
          continue;
        }
        const pointer = `original#/paths/${escape(their.path)}/${their.method}/responses/${status}/content/application~1json/schema`;
        // Errors travel as {"error": {...}} (docs/design.md §Errors); the original's error object is inside.
        const schema =
          code >= 400 ? { type: 'object', properties: { error: { $ref: pointer } }, required: ['error'], additionalProperties: false } : { $ref: pointer };
        responses.set(code, ajv.compile(schema));
      }
      operations.push({ key, method: method.toUpperCase(), path, ourId: op.operationId, theirId: their.op.operationId, responses });
    }
  }
  const onlyTheirs = [...theirs.entries()].filter(([k]) => !served.has(k)).map(([k, v]) => `${k} (${v.op.operationId})`);
  return { operations, onlyOurs, onlyTheirs, ourOnly };
}

/**
 * The operation serving `method` and a concrete `url` (query ignored), or undefined. `ourOnly`:
 * the operations only Rolodex serves; a URL one of them serves better is not the original's
 * (`/v1/notes/definitions` is not `/v1/notes/{id}` when the original has no notes definitions).
 */
export function operationFor(
  operations: CutOperation[],
  method: string,
  url: string,
  ourOnly: ReadonlyArray<{ method: string; path: string }> = [],
): CutOperation | undefined {
  const path = url.split('?')[0] as string;
  const segments = path.split('/');
  // A literal segment beats a parameter (`/v1/contacts/definitions` is not `/v1/contacts/{id}`).
  let best: { op: CutOperation | undefined; literals: number } | undefined;
  for (const op of [...operations, ...ourOnly.map((o) => ({ ...o, ours: true as const }))]) {
    if (op.method !== method) continue;
    const parts = op.path.split('/');
    if (parts.length !== segments.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const p = parts[i] as string;
      if (p.startsWith('{')) continue;
      if (p === segments[i]) literals++;
      else ok = false;
    }
    if (ok && (!best || literals > best.literals)) best = { op: 'ours' in op ? undefined : op, literals };
  }
  return best?.op;
}
