// A meeting of many participants in the trash (docs/trash.md, docs/meetings.md §Writes: up to
// 1,000 attendees) on both databases: its delete, a repeated delete by each kind of caller and its
// restore answer as for a meeting of three, each caller at its own access level. The delete's
// answer judges the caller's access against the participants the entry holds (src/trash/service.ts
// meetingFor), whatever their number.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { createUser } from '../../src/users/service.ts';
import { write } from '../../src/db/write.ts';
import { call, eachDialect, keyFor, seedWorkspace } from '../helpers/app.ts';
import { meetingBody } from '../helpers/meetings.ts';

eachDialect('trash: a meeting of many participants', (ctx) => {
  test('1,000 attendees: deleted, deleted again by an attendee, another user and a workspace key, restored', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const octx = operatorCtx(t.deps.db.kysely, s.workspaceId);
    const attendee = await keyFor(t, s.workspaceId, (await createUser(octx, { email: 'p999@many.test', role: 'member' })).id);
    const other = await keyFor(t, s.workspaceId, (await createUser(octx, { email: 'other@acme.test', role: 'member' })).id);
    const wsKey = await keyFor(t, s.workspaceId, null);
    const attendees = Array.from({ length: 1000 }, (_, i) => `p${i}@many.test`);
    const made = await call(
      t,
      s.secret,
      'POST',
      '/v1/meetings',
      meetingBody({ $attendeeEmails: attendees, $privacySetting: 'METADATA', $description: 'kept' }),
    );
    assert.equal(made.statusCode, 200, made.body);
    const id = made.json().id as string;

    const deleted = await call(t, attendee, 'DELETE', `/v1/meetings/${id}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal(deleted.json().accessLevel, 'FULL');
    assert.equal(deleted.json().fields.$description.value, 'kept');
    assert.equal(deleted.json().fields.$attendeeEmails.value.length, 1000);

    for (const [key, level] of [
      [attendee, 'FULL'],
      [other, 'METADATA'],
      [wsKey, 'METADATA'],
    ] as const) {
      const again = await call(t, key, 'DELETE', `/v1/meetings/${id}`);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().accessLevel, level);
    }
    assert.equal((await call(t, s.secret, 'GET', `/v1/meetings/${id}`)).statusCode, 404);

    await write(t.deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
    const back = await call(t, attendee, 'GET', `/v1/meetings/${id}`);
    assert.equal(back.statusCode, 200, back.body);
    assert.equal(back.json().accessLevel, 'FULL');
    assert.equal((await call(t, other, 'GET', `/v1/meetings/${id}`)).json().accessLevel, 'METADATA');
  });
});
