// An import's transactions on PostgreSQL plan each statement with its own values (docs/import.md
// §Speed, Plans made with the values): a generic plan cached while a table was small would be kept
// while the import grows it. Atomic and batched imports alike; SQLite sends no such setting.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

const SETTING = 'set local plan_cache_mode = force_custom_plan';
const text = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ object: 'contact', externalId: `c${i}`, fields: { $name: { value: { firstName: 'A', lastName: `${i}` } } } }),
  ).join('\n');

eachDialect('import plans', (ctx) => {
  for (const commit of ['atomic', 'batched'] as const)
    test(`a ${commit} import sets the plan mode first in each of its transactions`, async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const { statements } = await statementsOf(() =>
        runImport(operatorCtx(t.deps.db.kysely, s.workspaceId), { kinds: importKinds(), text: text(30), commit }),
      );
      const settings = statements.filter((x) => x.startsWith(SETTING)).length;
      if (t.deps.db.dialect === 'sqlite') return assert.equal(settings, 0);
      const begins = statements.filter((x) => /^begin/i.test(x)).length;
      assert.ok(settings > 0, statements.join('\n'));
      assert.equal(settings, begins, 'one setting per transaction');
    });
});
