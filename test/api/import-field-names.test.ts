// An import line's field names are those of its kind (docs/import.md §Format): a name that only an
// object's prototype holds (`constructor`, `toString`, `__proto__`) is no field, refused at its line
// as any unknown name is, never taken for a known one and silently dropped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';

const lines: Record<string, (field: string) => Record<string, unknown>> = {
  message: (field) => ({ object: 'message', externalId: 'm-1', channel: 'ch', fields: { $text: { value: 'Hi', valueType: 'TEXT' }, [field]: { value: 'x' } } }),
  meeting: (field) => ({ object: 'meeting', externalId: 'mt-1', fields: { $title: { value: 'Call' }, [field]: { value: 'x' } } }),
  email: (field) => ({ object: 'email', externalId: 'e-1', mailbox: 'mb', fields: { $from: { value: 'a@b.test' }, [field]: { value: 'x' } } }),
};
const named: Record<string, string> = { message: 'a message field', meeting: 'a meeting field', email: 'an e-mail field' };

eachDialect('import field names', (ctx) => {
  test('a field named as an object prototype member is refused at its line', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    for (const [object, line] of Object.entries(lines))
      for (const field of ['constructor', 'toString', 'hasOwnProperty']) {
        await assert.rejects(runImport(op, { kinds: importKinds(), text: JSON.stringify(line(field)) }), (err: Error) => {
          assert.match(err.message, new RegExp(`fields\\.${field}: is not ${named[object]}`), `${object} ${field}`);
          return true;
        });
      }
  });
});
