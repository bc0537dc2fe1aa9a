// What a caller without FULL access makes the server read (docs/emails.md §Who reads what,
// docs/meetings.md §Who sees what), not only what it answers, on both databases: every statement the
// database runs during the request is recorded (test/helpers/sql-spy.ts). A METADATA reader of an
// e-mail never reads its body or attachment rows; of a meeting, never its contents row (the
// description and the transcript's id); the blob store is not touched. A FULL reader reads them,
// so each assertion can fail.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorCtx } from '../../src/lib/context.ts';
import { createUser } from '../../src/users/service.ts';
import { call, eachDialect, keyFor, seedWorkspace } from '../helpers/app.ts';
import { seedEmailWorld, sendBody } from '../helpers/emails.ts';
import { meetingBody, transcript } from '../helpers/meetings.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

let blobReads = 0;

/** The statements of one GET that touch a table matching `tables`, and its answer. */
async function reads(run: () => ReturnType<typeof call>, tables: RegExp) {
  const blobsBefore = blobReads;
  const { result, statements } = await statementsOf(run);
  assert.equal(result.statusCode, 200, result.body);
  return { res: result.json(), touching: statements.filter((s) => tables.test(s)).length, blobs: blobReads - blobsBefore };
}

eachDialect(
  'reads of a caller without FULL access',
  (ctx) => {
    test('e-mails: no body or attachment row is read for a METADATA reader, on list and retrieve', async () => {
      const t = ctx();
      const w = await seedEmailWorld(t);
      const sent = await call(t, w.keys.ann, 'POST', '/v1/emails/send', sendBody(w.addresses.meta, { attachments: [w.files.small] }));
      assert.equal(sent.statusCode, 200, sent.body);
      const id = (await call(t, w.keys.ann, 'GET', '/v1/emails?limit=1')).json().data[0].id as string;
      const body = /email_bodies/;
      const files = /email_files/;
      for (const key of [w.keys.bob, w.keys.workspace]) {
        const list = await reads(() => call(t, key, 'GET', '/v1/emails'), files);
        assert.deepEqual(
          list.res.data.map((e: { accessLevel: string }) => e.accessLevel),
          ['METADATA'],
        );
        assert.equal(list.touching, 0, 'attachment rows read for a METADATA list');
        const one = await reads(() => call(t, key, 'GET', `/v1/emails/${id}`), /email_bodies|email_files/);
        assert.equal(one.res.accessLevel, 'METADATA');
        assert.equal(one.touching, 0, 'body or attachment rows read for a METADATA retrieve');
        assert.equal(list.blobs + one.blobs, 0);
      }
      // The owner reads at FULL: the same requests read them.
      assert.ok((await reads(() => call(t, w.keys.ann, 'GET', '/v1/emails'), files)).touching > 0);
      const full = await reads(() => call(t, w.keys.ann, 'GET', `/v1/emails/${id}`), body);
      assert.equal(full.res.accessLevel, 'FULL');
      assert.ok(full.touching > 0);
      assert.ok((await reads(() => call(t, w.keys.ann, 'GET', `/v1/emails/${id}`), files)).touching > 0);
    });

    test('meetings: no contents row (description, transcript) is read for a METADATA reader, on list and retrieve', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const octx = operatorCtx(t.deps.db.kysely, s.workspaceId);
      const organizer = await keyFor(t, s.workspaceId, (await createUser(octx, { email: 'org@reads.test', role: 'member' })).id);
      const other = await keyFor(t, s.workspaceId, (await createUser(octx, { email: 'other@reads.test', role: 'member' })).id);
      const workspace = await keyFor(t, s.workspaceId, null);
      const file = await transcript(t, s.secret, 'transcript text');
      const made = await call(
        t,
        s.secret,
        'POST',
        '/v1/meetings',
        meetingBody(
          { $description: 'secret description', $organizerEmail: 'org@reads.test', $privacySetting: 'METADATA' },
          { relationships: { $transcript: file } },
        ),
      );
      assert.equal(made.statusCode, 200, made.body);
      const id = made.json().id as string;
      const contents = /meeting_contents/;
      for (const key of [other, workspace]) {
        for (const url of ['/v1/meetings', `/v1/meetings/${id}`]) {
          const r = await reads(() => call(t, key, 'GET', url), contents);
          const item = url === '/v1/meetings' ? r.res.data[0] : r.res;
          assert.equal(item.accessLevel, 'METADATA');
          assert.equal(r.touching, 0, `contents read for a METADATA reader: GET ${url}`);
          assert.equal(r.blobs, 0);
        }
      }
      for (const url of ['/v1/meetings', `/v1/meetings/${id}`]) {
        const r = await reads(() => call(t, organizer, 'GET', url), contents);
        const item = url === '/v1/meetings' ? r.res.data[0] : r.res;
        assert.equal(item.accessLevel, 'FULL');
        assert.equal(item.fields.$description.value, 'secret description');
        assert.ok(r.touching > 0, `GET ${url} at FULL reads the contents`);
      }
    });
  },
  {
    deps: (deps) => {
      const read = deps.blobs.read.bind(deps.blobs);
      deps.blobs.read = (...args: Parameters<typeof read>) => {
        blobReads++;
        return read(...args);
      };
    },
  },
);
