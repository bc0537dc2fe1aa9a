// A meeting's update and its delete at the same moment (docs/meetings.md §Writes, docs/trash.md):
// on PostgreSQL each reads the meeting locked, so the one that comes second waits for the first. An
// update that waited for a delete answers 404, never 500; a delete that waited for an update keeps
// what the update wrote, in its answer and in the trash that a restore brings back.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { updateMeeting } from '../../src/meetings/service.ts';
import { restore } from '../../src/trash/restore.ts';
import { trashMeeting } from '../../src/trash/service.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { meetingBody } from '../helpers/meetings.ts';
import { meanwhile } from '../helpers/pg-locks.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`a meeting written by two transactions at once [${dialect}]`, () => {
    test('an update that waited for a delete of the meeting answers 404', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const m = (await call(t, s.secret, 'POST', '/v1/meetings', meetingBody())).json();
        const r = await meanwhile(
          t,
          (tx) => trashMeeting(operatorCtx(tx, s.workspaceId), { id: m.id }),
          () => call(t, s.secret, 'POST', `/v1/meetings/${m.id}`, { fields: { $privacySetting: 'METADATA' } }),
        );
        assert.equal(r.statusCode, 404, r.body);
        assert.equal(r.json().error.code, 'resource_not_found');
      } finally {
        await t.close();
      }
    });

    test('a delete that waited for an update keeps what the update wrote', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const m = (await call(t, s.secret, 'POST', '/v1/meetings', meetingBody())).json();
        const r = await meanwhile(
          t,
          (tx) => updateMeeting(operatorCtx(tx, s.workspaceId), { id: m.id, fields: { $privacySetting: 'METADATA' } }),
          () => call(t, s.secret, 'DELETE', `/v1/meetings/${m.id}`),
        );
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(r.json().fields.$privacySetting.value, 'METADATA', 'the answer is the meeting as the update left it');
        await write(t.deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: m.id }));
        const back = (await call(t, s.secret, 'GET', `/v1/meetings/${m.id}`)).json();
        assert.equal(back.fields.$privacySetting.value, 'METADATA', 'the restore brings back the update');
      } finally {
        await t.close();
      }
    });
  });
