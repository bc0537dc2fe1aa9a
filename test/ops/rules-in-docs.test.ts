// The rules the server states to clients and the docs pages that state them for readers agree:
// the value formats (src/records/value-formats.ts, docs/records.md §Value formats) and the filter
// operators by valueType (src/records/filter/operators.ts, docs/filtering.md §Operators).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { VALUE_TYPES } from '../../src/lib/value-types.ts';
import { FIELD_OPERATORS, filterSyntaxText, UNFILTERABLE } from '../../src/records/filter/operators.ts';
import { VALUE_FORMATS } from '../../src/records/value-formats.ts';

const page = (name: string) => readFileSync(new URL(`../../docs/${name}.md`, import.meta.url), 'utf8');

/** The lines of a page's section, from its heading to the next heading. */
function section(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.replace(/^#+ /, '') === heading && l.startsWith('#'));
  assert.ok(start >= 0, `no heading "${heading}"`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('#'));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

test('docs/records.md §Value formats lists the rules of src/records/value-formats.ts word for word', () => {
  const items: Array<[string, string]> = [];
  for (const line of section(page('records'), 'Value formats')) {
    const item = /^- `([A-Z_]+)`: (.*)$/.exec(line);
    if (item) items.push([item[1]!, item[2]!]);
    else if (line.startsWith('  ') && items.length > 0) items.at(-1)![1] += ` ${line.trim()}`;
  }
  const expected = Object.entries(VALUE_FORMATS);
  assert.deepEqual(
    items.map(([type]) => type),
    expected.map(([type]) => type),
    'the list names every valueType once, in the order of value-formats.ts',
  );
  for (const [type, rule] of expected) {
    const written = items.find(([t]) => t === type)![1];
    assert.equal(written, rule, `docs/records.md §Value formats differs from value-formats.ts on ${type}`);
  }
});

test('the operators table of docs/filtering.md is the one the parser and the OpenAPI document read', () => {
  const rows = section(page('filtering'), 'Operators')
    .filter((l) => l.startsWith('|'))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  const [header, , ...body] = rows;
  // Each column but the first and the last names its operators in backquotes.
  const columns = header!.map((h) => [...h.matchAll(/`(\w+)`/g)].map((m) => m[1]!));
  const documented = new Map<string, { ops: string[]; default: string }>();
  const unfilterable: string[] = [];
  for (const cells of body) {
    const types = cells[0]!.split(',').map((t) => t.trim());
    if (cells[1] === 'not filterable') {
      unfilterable.push(...types);
      continue;
    }
    const ops = columns.slice(1, -1).flatMap((names, i) => (cells[i + 1] === 'yes' ? names : []));
    for (const type of types) documented.set(type, { ops, default: cells.at(-1)!.replace(/`/g, '') });
  }
  const coded = Object.entries(FIELD_OPERATORS).map(([type, ops]) => [type, { ops: [...ops].sort(), default: ops[0] }]);
  assert.deepEqual(
    [...documented].map(([type, d]) => [type, { ops: [...d.ops].sort(), default: d.default }]).sort(),
    coded.sort(),
    'docs/filtering.md §Operators: the operators of each valueType and the one taken without an operator',
  );
  assert.deepEqual([...unfilterable].sort(), [...UNFILTERABLE].sort(), 'docs/filtering.md §Operators: the types that are not filterable');
  assert.deepEqual([...documented.keys(), ...unfilterable].filter((t) => t !== 'HTML').sort(), [...VALUE_TYPES].sort(), 'every valueType has its row');
  // The description the OpenAPI document gives a filterable listing names each operator's types.
  const text = filterSyntaxText();
  for (const [type, ops] of Object.entries(FIELD_OPERATORS)) assert.ok(text.includes(type) && ops.every((op) => text.includes(`\`${op}\``)), type);
});
