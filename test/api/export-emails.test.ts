// `rolodex export` of mailboxes and e-mails (docs/import.md §Export, docs/emails.md §Import):
// mailboxes (FULL, METADATA, one removed, one added without externalId) and e-mails (imported HTML
// and TEXT bodies with cc and bcc, one sent through the API, a draft) are exported and imported
// into an empty workspace, which then reads the same through the API for every caller, keeps the
// removed mailbox removed, and delivers nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, keyFor, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';

type Line = { object: string; externalId: string };
type Email = { id: string; externalId: string | null; fields: Record<string, unknown>; relationships: Record<string, { values: string[] }> };

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

/** What a caller reads of an e-mail, ids replaced by the names an export gives them (`name`). */
function normalized(e: Email, name: (id: string) => string) {
  const { id, createdAt: _c, updatedAt: _u, httpLink: _h, externalId, relationships, ...rest } = e as Email & Record<string, unknown>;
  const rels = Object.fromEntries(Object.entries(relationships).map(([k, r]) => [k, { ...r, values: r.values.map(name) }]));
  return { ...rest, name: externalId ?? id, relationships: rels };
}

eachDialect('rolodex export of mailboxes and e-mails', (ctx) => {
  test('export, then import into an empty workspace, reproduces mailboxes and e-mails and sends nothing', async () => {
    const t = ctx();
    const a = await seedWorkspace(t);
    const tag = randomBytes(4).toString('hex');
    const at = { ann: `ann-${tag}@acme.test`, bob: `bob-${tag}@acme.test`, old: `old-${tag}@acme.test` };
    const field = (value: unknown, valueType: string) => ({ value, valueType });
    const mail = (externalId: string, mailbox: string, fields: Record<string, unknown>) => ({ object: 'email', externalId, mailbox, fields });
    const source = [
      { object: 'user', externalId: 'u-ann', email: at.ann, firstName: 'Ann', role: 'member' },
      { object: 'user', externalId: 'u-bob', email: at.bob, firstName: 'Bob', role: 'member' },
      { object: 'mailbox', externalId: 'mb-ann', user: 'u-ann', address: at.ann },
      { object: 'mailbox', externalId: 'mb-bob', user: 'u-bob', address: at.bob, othersSee: 'METADATA' },
      { object: 'mailbox', externalId: 'mb-old', user: 'u-ann', address: at.old },
      mail('e-html', 'mb-ann', {
        $subject: field('Renewal', 'TEXT'),
        $body: field('<p>Hi <b>Ann</b></p>', 'HTML'),
        $sentAt: field('2026-03-01T10:00:00+01:00', 'DATETIME'),
        $from: field('Buyer@Globex.test', 'EMAIL'),
        $to: field([at.ann], 'EMAIL'),
        $cc: field(['cc1@globex.test', 'cc2@globex.test'], 'EMAIL'),
        $bcc: field(['audit@globex.test'], 'EMAIL'),
      }),
      mail('e-text', 'mb-bob', {
        $subject: field('Private', 'TEXT'),
        $body: field('Tom & Jerry <t@x.test>\nsecond line', 'TEXT'),
        $sentAt: field('2026-03-02T09:00:00.000Z', 'DATETIME'),
        $from: field(at.bob, 'EMAIL'),
        $to: field(['carol@example.test'], 'EMAIL'),
        $cc: field(['dave@example.test'], 'EMAIL'),
      }),
      mail('e-old', 'mb-old', { $sentAt: field('2025-12-24T18:00:00.000Z', 'DATETIME'), $from: field('x@example.test', 'EMAIL') }),
    ];
    const sourceFile = join(t.tdb.dataDir, 'mail-source.ndjson');
    writeFileSync(sourceFile, source.map((o) => JSON.stringify(o)).join('\n'));
    const first = await rolodex(t, ['import', '--workspace', a.workspaceId, sourceFile, '--json']);
    assert.equal(first.code, 0, first.err);
    const aIds = JSON.parse(first.out).ids as Record<string, Record<string, string>>;
    // The removed mailbox's address goes to a new mailbox of the seeded user, added without externalId.
    assert.equal((await rolodex(t, ['mailbox', 'remove', aIds.mailbox?.['mb-old'] as string])).code, 0);
    const added = await rolodex(t, ['mailbox', 'add', '--workspace', a.workspaceId, '--user', a.userId, '--address', at.old, '--json']);
    assert.equal(added.code, 0, added.err);
    const newBox = JSON.parse(added.out).id as string;
    const sent = {
      from: at.old,
      to: ['erin@example.test'],
      cc: [at.ann],
      bcc: ['frank@example.test'],
      subject: 'Sent',
      messageBody: { contentType: 'TEXT', content: 'a < b' },
    };
    assert.equal((await call(t, a.secret, 'POST', '/v1/emails/send', sent)).statusCode, 200);
    assert.equal((await call(t, a.secret, 'POST', '/v1/emails/draft', { from: at.old, subject: 'Later' })).statusCode, 200);

    const file = join(t.tdb.dataDir, 'mail-export.ndjson');
    const ex = await rolodex(t, ['export', '--workspace', a.workspaceId, file]);
    assert.equal(ex.code, 0, ex.err);
    const exported = lines(file);
    assert.deepEqual([...new Set(exported.map((l) => l.object))], ['user', 'mailbox', 'email'], 'users, then mailboxes, then e-mails');
    assert.equal(exported.filter((l) => l.object === 'email').length, 4, 'the sent e-mail is written, the draft is not');

    const b = await seedWorkspace(t);
    const im = await rolodex(t, ['import', '--workspace', b.workspaceId, file, '--json']);
    assert.equal(im.code, 0, im.err);
    const { ids, counts } = JSON.parse(im.out) as { ids: Record<string, Record<string, string>>; counts: Record<string, number> };
    assert.deepEqual(counts, { user: 3, mailbox: 4, email: 4 });

    // Every caller reads the same e-mails at the same level, the list in the same order.
    const aName = new Map<string, string>([[a.userId, a.userId]]);
    for (const [ext, id] of Object.entries(aIds.user ?? {})) aName.set(id, ext);
    const bName = new Map<string, string>();
    for (const byExt of Object.values(ids)) for (const [ext, id] of Object.entries(byExt)) bName.set(id, ext);
    const userIn = (ws: string, map: Record<string, string> | undefined, ext: string) => keyFor(t, ws, map?.[ext] as string);
    const callers: [string, string, string][] = [
      ['ann', await userIn(a.workspaceId, aIds.user, 'u-ann'), await userIn(b.workspaceId, ids.user, 'u-ann')],
      ['bob', await userIn(a.workspaceId, aIds.user, 'u-bob'), await userIn(b.workspaceId, ids.user, 'u-bob')],
      ['owner of the new mailbox', a.secret, await userIn(b.workspaceId, ids.user, a.userId)],
      ['workspace key', await keyFor(t, a.workspaceId, null), await keyFor(t, b.workspaceId, null)],
    ];
    for (const [who, keyA, keyB] of callers) {
      const read = async (key: string, name: (id: string) => string) => {
        const list = (await call(t, key, 'GET', '/v1/emails')).json<{ data: Email[]; totalCount: number }>();
        assert.equal(list.totalCount, 4);
        const one = await Promise.all(list.data.map(async (e) => (await call(t, key, 'GET', `/v1/emails/${e.id}`)).json<Email>()));
        return [...list.data, ...one].map((e) => normalized(e, name));
      };
      const orig = await read(keyA, (id) => aName.get(id) ?? `?${id}`);
      const copy = await read(keyB, (id) => bName.get(id) ?? `?${id}`);
      assert.deepEqual(copy, orig, who);
    }
    const levels = (await call(t, await keyFor(t, b.workspaceId, null), 'GET', '/v1/emails')).json<{ data: { accessLevel: string }[] }>();
    assert.deepEqual(levels.data.map((e) => e.accessLevel).toSorted(), ['FULL', 'FULL', 'FULL', 'METADATA']);

    // The mailboxes, removed one included, come back as they were: an export of the copy writes
    // the same mailbox and e-mail lines (its externalIds are the names the first export gave).
    const again = join(t.tdb.dataDir, 'mail-export-copy.ndjson');
    assert.equal((await rolodex(t, ['export', '--workspace', b.workspaceId, again])).code, 0);
    const mailOf = (all: Line[]) =>
      all.filter((l) => l.object === 'mailbox' || l.object === 'email').toSorted((x, y) => (x.externalId < y.externalId ? -1 : 1));
    assert.deepEqual(mailOf(lines(again)), mailOf(exported));
    assert.ok(mailOf(exported).some((l) => l.externalId === newBox));
    const live = await rolodex(t, ['mailbox', 'list', '--workspace', b.workspaceId, '--json']);
    const boxes = (JSON.parse(live.out) as { externalId: string; address: string }[]).map((m) => `${m.externalId} ${m.address}`);
    assert.deepEqual(boxes.toSorted(), [`mb-ann ${at.ann}`, `mb-bob ${at.bob}`, `${newBox} ${at.old}`].toSorted());

    // An import of an export delivers nothing: the sent e-mail is history in the copy.
    const db = t.deps.db.kysely as any;
    assert.deepEqual(await db.selectFrom('email_outbox').selectAll().where('workspace_id', '=', b.workspaceId).execute(), []);
    const status = await db.selectFrom('emails').select('delivery_status').where('workspace_id', '=', b.workspaceId).execute();
    assert.deepEqual(
      status.map((r: { delivery_status: string | null }) => r.delivery_status),
      [null, null, null, null],
    );
  });
});
