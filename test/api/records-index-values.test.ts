// The value index rows of a record (docs/records.md §Value index): what each valueType becomes,
// so that filters and look-ups match the same way whoever wrote the record.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FieldDef, TypeDefinitions } from '../../src/definitions/service.ts';
import type { ValueType } from '../../src/lib/resource-schemas.ts';
import { valueRows } from '../../src/records/index/values.ts';

function defs(fields: Record<string, ValueType>): TypeDefinitions {
  const map = new Map<string, FieldDef>();
  for (const [key, valueType] of Object.entries(fields)) map.set(key, { key, valueType } as FieldDef);
  return { objectType: 'contact', fields: map, relationships: new Map(), archived: new Map() };
}

test('each valueType becomes the rows a filter or a look-up matches', () => {
  const d = defs({ $name: 'FULL_NAME', $email: 'EMAIL', addr: 'ADDRESS', n: 'NUMBER', ok: 'CHECKBOX', at: 'DATETIME', t: 'TEXT', gone: 'TEXT' });
  const rows = valueRows('ws_1', d, 'con_1', {
    $name: { firstName: 'Ａnn', lastName: 'ÖSTER' },
    $email: ['Ann@Acme.test', 'ann@home.test'],
    addr: { street: 'Main St 1', city: 'Berlin', country: 'DE', latitude: 52.5 },
    n: 12.5,
    ok: false,
    at: '2026-03-01T10:00:00.000Z',
    t: 'Hello',
    gone: null,
    unknown: 'ignored',
  });
  const seen = rows.map((r) => [r.field, r.value_text ?? r.value_num]);
  assert.deepEqual(seen, [
    ['$name', 'ann öster'],
    ['$email', 'ann@acme.test'],
    ['$email', 'ann@home.test'],
    ['addr', 'main st 1'],
    ['addr', 'berlin'],
    ['addr', 'de'],
    ['n', 12.5],
    ['ok', 0],
    ['at', Date.parse('2026-03-01T10:00:00Z')],
    ['t', 'hello'],
  ]);
  assert.ok(rows.every((r) => r.workspace_id === 'ws_1' && r.object_type === 'contact' && r.record_id === 'con_1'));
  assert.deepEqual(valueRows('ws_1', d, 'con_1', { $name: { lastName: 'Solo' } })[0]!.value_text, 'solo');
});
