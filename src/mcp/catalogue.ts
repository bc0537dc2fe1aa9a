// The API's own description, as the documentation tools show it (docs/mcp.md §Tools): the
// operations of /openapi.json under /v1, found by words, and one operation in full with the
// component schemas it refers to. Built once from the document the app serves. A search also
// finds the format a field value of each valueType is written in (src/records/value-formats.ts),
// which no operation's words hold: "phone number format" finds TELEPHONE's rule.
import type { ValueType } from '../lib/value-types.ts';
import { filterSyntaxText } from '../records/filter/operators.ts';
import { VALUE_FORMATS } from '../records/value-formats.ts';

type Json = Record<string, unknown>;

export interface OperationSummary {
  method: string;
  path: string;
  operationId: string;
  summary: string;
}

export interface ValueFormat {
  valueType: ValueType;
  format: string;
}

interface Operation extends OperationSummary {
  spec: Json;
  /** Lower-case text the words are looked for in: the parts below, method, tags, own description. */
  text: string;
  /** The filter syntax every filterable listing's description repeats, in lower case; else empty. */
  shared: string;
  /** The operationId and its camel-case words, the path and the summary, in lower case. */
  name: string;
  lowerPath: string;
  lowerSummary: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

const FILTER_SYNTAX = filterSyntaxText();

export interface ApiCatalogue {
  /**
   * Without `limit`: the 25 best operations for words, every operation for none (the catalogue);
   * with them the value formats the words match, best first (every one for no words).
   */
  search(words: string, limit?: number): { total: number; operations: OperationSummary[]; valueFormats: ValueFormat[] };
  /** The methods of the operations at a documented path (`/v1/accounts/{id}`), none for another. */
  methods(path: string): string[];
  /** One operation by operationId, or by method and path; undefined when there is none. */
  details(input: { operationId?: string | undefined; method?: string | undefined; path?: string | undefined }): Json | undefined;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const LETTER = /[\p{L}\p{N}]/u;

/** The endings after which a plural takes -es (address, box, buzz, search, hash), not only -s. */
const TAKES_ES = /(?:s|x|z|ch|sh)$/;

/**
 * Whether `term` stands in `text` as a whole word, or as the word of a plural in -s (or -es after
 * s, x, z, ch and sh): where it occurs, no letter or digit is next to it on either side, but that
 * ending. So "list" finds "list", "lists" and "$list", never "listing" or "blacklist"; "date"
 * finds "date-time", never "update"; "email" finds "emails", never "emailed"; "address" finds
 * "addresses", and "not" no "notes", the plural of "note"; a term holding marks finds them as
 * written ("e-mail", "$email", "/v1/contacts").
 */
export function holdsWord(text: string, term: string): boolean {
  const letterAt = (i: number) => i >= 0 && i < text.length && LETTER.test(text.charAt(i));
  const es = TAKES_ES.test(term);
  for (let i = text.indexOf(term); i !== -1; i = text.indexOf(term, i + 1)) {
    if (letterAt(i - 1)) continue;
    const end = i + term.length;
    const plural = es && text.startsWith('es', end) && !letterAt(end + 2) ? 2 : text.charAt(end) === 's' && !letterAt(end + 1) ? 1 : 0;
    if (plural > 0 || !letterAt(end)) return true;
  }
  return false;
}

/**
 * Words a question is made of that name nothing in the API (docs/mcp.md §Search words): a query
 * drops them unless it holds nothing else, so "how do I list the members of a list" searches
 * "list members", and "a" alone still searches "a".
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  'a an the and or of to in on at by for from with about into is are be do does can how what which who i me my we you it its this that these those'.split(' '),
);

/**
 * What splits a query into words: white space and the marks but those a name of the API holds
 * (`$email`, `e-mail`, `/v1/contacts`). A letter or digit of any script is part of its word
 * ("müller", "日本"), so that a word no operation holds finds nothing, where splitting at it
 * would leave parts of the word, or none, and find others or every operation.
 */
const BETWEEN_WORDS = /[^\p{L}\p{M}\p{N}$_{}:/-]+/u;

/** The words of a query, in lower case, each once, without its stop words if it has others. */
function queryTerms(words: string): string[] {
  const terms = [...new Set(words.toLowerCase().split(BETWEEN_WORDS).filter(Boolean))];
  const content = terms.filter((t) => !STOP_WORDS.has(t));
  return content.length > 0 ? content : terms;
}

/** The words of a camel-case name, apart: `listListAccounts` is "list list accounts". */
const camelWords = (name: string): string => name.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2');

interface Score {
  /** How many of the query's words the operation's own text holds (all but the filter syntax). */
  own: number;
  /** Whether a word is in the operationId, the path or the summary. */
  named: boolean;
  points: number;
  /** The words found only in the filter syntax the filterable listings share. */
  shared: number;
}

/**
 * How well an operation answers the words (docs/mcp.md §Search words): `own` counts the words its
 * own text holds, and each one counts points by the most telling part that holds it, 3 for a word
 * of the operationId, 2 for the path or the summary, 1 for the method, tags or own description,
 * and a word in the path adds half a point once. So "list members" finds `listMembers` (both words
 * its own) before `updateList`, whose summary alone speaks of members. A word found only in the
 * shared filter syntax scores no point; it counts in `shared` for an operation that holds no other
 * word, to order those (`byScore`).
 */
function operationScore(o: Operation, terms: string[]): Score {
  const score = { own: 0, named: false, points: 0, shared: 0 };
  let inPath = false;
  for (const t of terms) {
    const path = holdsWord(o.lowerPath, t);
    inPath ||= path;
    const named = holdsWord(o.name, t) ? 3 : path || holdsWord(o.lowerSummary, t) ? 2 : 0;
    score.named ||= named > 0;
    const own = named > 0 ? named : holdsWord(o.text, t) ? 1 : 0;
    if (own > 0) {
      score.own += 1;
      score.points += own;
    } else if (o.shared !== '' && holdsWord(o.shared, t)) score.shared += 1;
  }
  if (inPath) score.points += 0.5;
  if (score.own > 0) score.shared = 0;
  return score;
}

/**
 * Best first: more of the query's words in the operation's own text, wherever they stand, so that
 * the writes whose description names both "idempotency" and "key" come before validateCredential,
 * whose summary names "key" alone; among as many words, one in the operationId, path or summary
 * before none, then by points; last the operations found only in the shared filter syntax (no
 * points), by the words it holds.
 */
const byScore = (a: Score, b: Score): number => b.own - a.own || Number(b.named) - Number(a.named) || b.points - a.points || b.shared - a.shared;

const summaryOf = ({ method, path, operationId, summary }: Operation): OperationSummary => ({ method, path, operationId, summary });

/** Every `#/components/schemas/X` that `value` refers to, directly or through another one. */
function referencedSchemas(value: unknown, schemas: Json, found = new Map<string, unknown>()): Map<string, unknown> {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && x.startsWith('#/components/schemas/')) {
        const name = x.slice('#/components/schemas/'.length);
        if (!found.has(name) && Object.hasOwn(schemas, name)) {
          found.set(name, schemas[name]);
          visit(schemas[name]);
        }
      } else visit(x);
    }
  };
  visit(value);
  return found;
}

export function apiCatalogue(document: Json): ApiCatalogue {
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Json;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (path !== '/v1' && !path.startsWith('/v1/')) continue;
    for (const method of METHODS) {
      const spec = item[method] as Json | undefined;
      if (!spec) continue;
      const op = { method: method.toUpperCase(), path, operationId: str(spec.operationId), summary: str(spec.summary) };
      // The filter syntax is the same text in every filterable listing's description: it is
      // searched apart, so that it never ranks a listing above an operation's own words.
      const description = str(spec.description);
      const shared = description.includes(FILTER_SYNTAX) ? FILTER_SYNTAX : '';
      const tags = Array.isArray(spec.tags) ? spec.tags.join(' ') : '';
      const name = `${op.operationId} ${camelWords(op.operationId)}`.toLowerCase();
      operations.push({
        ...op,
        spec,
        text: `${op.method} ${path} ${name} ${op.summary} ${tags} ${description.replace(shared, '')}`.toLowerCase(),
        shared: shared.toLowerCase(),
        name,
        lowerPath: path.toLowerCase(),
        lowerSummary: op.summary.toLowerCase(),
      });
    }
  }
  const byId = new Map(operations.map((o) => [o.operationId.toLowerCase(), o]));
  const formats = Object.entries(VALUE_FORMATS).map(([valueType, format]) => {
    const name = valueType.toLowerCase();
    return { valueType: valueType as ValueType, format, name, text: `${name} ${name.replace('_', ' ')} ${format}`.toLowerCase() };
  });

  return {
    search(words, limit) {
      const terms = queryTerms(words);
      const scored = operations
        .map((o) => ({ o, score: operationScore(o, terms) }))
        .filter((x) => terms.length === 0 || x.score.own > 0 || x.score.shared > 0)
        .sort((a, b) => byScore(a.score, b.score) || a.o.path.localeCompare(b.o.path) || a.o.method.localeCompare(b.o.method));
      const cap = limit ?? (terms.length === 0 ? scored.length : 25);
      // A value type's own name counts once more than its rule's words, so that "address" finds
      // ADDRESS before EMAIL, whose rule speaks of e-mail addresses.
      const valueFormats = formats
        .map((f) => ({ f, score: terms.filter((t) => holdsWord(f.text, t)).length + (terms.some((t) => holdsWord(f.name, t)) ? 0.5 : 0) }))
        .filter((x) => terms.length === 0 || x.score >= 1)
        .sort((a, b) => b.score - a.score || a.f.valueType.localeCompare(b.f.valueType))
        .map(({ f }) => ({ valueType: f.valueType, format: f.format }));
      return { total: scored.length, operations: scored.slice(0, cap).map((x) => summaryOf(x.o)), valueFormats };
    },
    methods(path) {
      return operations.filter((o) => o.path === path).map((o) => o.method);
    },
    details(input) {
      const op = input.operationId
        ? byId.get(input.operationId.toLowerCase())
        : operations.find((o) => o.method === input.method?.toUpperCase() && o.path === input.path);
      if (!op) return undefined;
      const s = op.spec;
      const body = (s.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      const responses = Object.fromEntries(
        Object.entries((s.responses ?? {}) as Record<string, Json>).map(([status, r]) => {
          const content = r.content as Record<string, Json> | undefined;
          return [status, { description: r.description, ...(content ? { schema: content['application/json']?.schema } : {}) }];
        }),
      );
      const out: Json = {
        ...summaryOf(op),
        description: s.description ?? null,
        scopes: s['x-scopes'] ?? [],
        // An operation that takes any one of several scopes (a merge or an enrichment run read by id).
        ...(s['x-any-scopes'] ? { anyOfScopes: s['x-any-scopes'] } : {}),
        rateCategory: s['x-rate-category'] ?? null,
        idempotent: s['x-idempotent'] === true,
        // The headers are the tools' to send (Service-Version; Idempotency-Key as idempotencyKey).
        parameters: ((s.parameters ?? []) as Json[]).filter((p) => p.in !== 'header'),
        requestBody: body ? (body['application/json']?.schema ?? null) : null,
        requestBodyRequired: (s.requestBody as Json | undefined)?.required === true,
        responses,
      };
      const refs = referencedSchemas(out, schemas);
      if (refs.size > 0) out.components = { schemas: Object.fromEntries(refs) };
      return out;
    },
  };
}
