// Which operators a filter takes, by the field's valueType, and the syntax a filterable listing's
// description states (docs/filtering.md §Operators). The parser reads FIELD_OPERATORS and the
// OpenAPI document shows filterSyntaxText(), made from the same table, so the two cannot differ;
// test/ops/rules-in-docs.test.ts checks the table of docs/filtering.md against it.
import { VALUE_TYPES, type ValueType } from '../../lib/value-types.ts';

export type Operator = 'equal' | 'greaterThan' | 'greaterThanOrEqual' | 'lessThan' | 'lessThanOrEqual' | 'startsWith' | 'contains';
export const OPERATORS: readonly Operator[] = ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual', 'startsWith', 'contains'];
const RANGE: readonly Operator[] = ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual'];

/** Operators each valueType allows; the first is the one used when none is given. */
export const FIELD_OPERATORS: Readonly<Partial<Record<ValueType, readonly Operator[]>>> = {
  NUMBER: RANGE,
  CURRENCY: RANGE,
  DATETIME: RANGE,
  TEXT: ['equal', 'startsWith'],
  FULL_NAME: ['equal', 'startsWith'],
  SOCIAL_HANDLE: ['equal', 'startsWith'],
  ADDRESS: ['equal', 'startsWith'],
  CHECKBOX: ['equal'],
  SINGLE_SELECT: ['equal'],
  EMAIL: ['contains'],
  TELEPHONE: ['contains'],
  URL: ['contains'],
};

/** A relationship filter names an id; both operators mean "links to it". */
export const RELATIONSHIP_OPERATORS: readonly Operator[] = ['equal', 'contains'];

/** The types no filter takes: the record valueTypes without operators, and e-mails' HTML. */
export const UNFILTERABLE: readonly string[] = [...VALUE_TYPES.filter((t) => FIELD_OPERATORS[t] === undefined), 'HTML'];

const code = (op: string) => `\`${op}\``;
const and = (xs: readonly string[]) => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);

/** What a filterable listing's description says of its filters, the operators from the table. */
export function filterSyntaxText(): string {
  const byOps = new Map<string, { ops: readonly Operator[]; types: ValueType[] }>();
  const byDefault = new Map<Operator, ValueType[]>();
  for (const [type, ops] of Object.entries(FIELD_OPERATORS) as Array<[ValueType, readonly Operator[]]>) {
    byOps.set(ops.join(), { ops, types: [...(byOps.get(ops.join())?.types ?? []), type] });
    byDefault.set(ops[0]!, [...(byDefault.get(ops[0]!) ?? []), type]);
  }
  const operators = [...byOps.values()].map((g) => `${and(g.ops.map(code))} for ${and(g.types)}`);
  const [usual, ...others] = [...byDefault.keys()];
  const defaults = [code(usual!), ...others.map((op) => `${code(op)} for ${and(byDefault.get(op)!)}`)].join(', or ');
  return [
    'Takes filters in its query string, each `<key>=<value>` or `<key>[<operator>]=<value>` (percent-encoded), combined with AND.',
    "`<key>` is a field or relationship key that this type's `GET …/definitions` lists, or a relationship's slug: `$<type>-<type>` (`$task-account` on tasks), `$<type>-<key>` for a custom relationship.",
    `Operators by the field's valueType: ${operators.join('; ')}; ${RELATIONSHIP_OPERATORS.map(code).join(' or ')} with an id for a relationship.`,
    `A SINGLE_SELECT value is an option id or label. Without an operator, ${defaults}.`,
    `\`-\` before an operator negates it (\`$name[-equal]=Acme\`). ${and(UNFILTERABLE)} fields are not filterable.`,
  ].join(' ');
}
