// A meeting's $meetingUrl is a URL value (docs/meetings.md §Writes, docs/records.md §Writing
// fields): an absolute http or https URL with a host, on both databases, through the API's create
// and the import alike. Another scheme (`javascript:`, `data:`), which a client would open as the
// meeting's link, is refused with `invalid_value` naming the field, and nothing is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { importInto } from '../helpers/emails.ts';
import { assertError } from '../helpers/files.ts';
import { meetingBody } from '../helpers/meetings.ts';

const REFUSED = [
  'javascript:alert(document.cookie)',
  'JavaScript://acme.test/%0Aalert(1)',
  'data:text/html,<script>alert(1)</script>',
  'vbscript:msgbox(1)',
  'ftp://files.acme.test/call',
  'mailto:ann@acme.test',
  'zoommtg://zoom.us/join?confno=1',
  'https:meet.acme.test/abc',
  'https:///abc',
  ' https://meet.acme.test/abc',
  'https://meet.acme.test/ä',
  'https://meet.acme.test/a b',
  'https://meet.acme.test\\abc',
];

const ACCEPTED = ['https://meet.acme.test/abc-defg-hij', 'HTTP://Meet.Acme.test/x?pwd=1#frag', 'https://zoom.us/j/123?pwd=a%20b'];

eachDialect('meeting URLs', (ctx) => {
  test('the API creates a meeting only with an http or https URL; any other is invalid_value, nothing written', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const url of REFUSED) {
      const res = await call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $meetingUrl: url }));
      assertError(res, 400, 'invalid_value', 'fields.$meetingUrl');
      assert.match(res.json().error.message, /^"fields\.\$meetingUrl" must be an absolute http or https URL/, url);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/meetings')).json().totalCount, 0, 'no refused meeting was written');
    for (const url of ACCEPTED) {
      const res = await call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $meetingUrl: url }));
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.equal(res.json().fields.$meetingUrl.value, url, 'kept as written');
    }
  });

  test('the import holds a meeting line to the same rule, naming the field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const line = (externalId: string, url: string) => ({
      object: 'meeting',
      externalId,
      fields: {
        $title: { value: 'Call', valueType: 'TEXT' },
        $startDate: { value: '2026-01-10T09:00:00Z', valueType: 'DATETIME' },
        $endDate: { value: '2026-01-10T10:00:00Z', valueType: 'DATETIME' },
        $meetingUrl: { value: url, valueType: 'URL' },
      },
    });
    for (const [i, url] of REFUSED.entries()) {
      await assert.rejects(importInto(t, s.workspaceId, [line(`m-${i}`, url)]), (err: Error & { errors?: Array<{ message: string }> }) => {
        assert.match(err.errors?.[0]?.message ?? '', /fields\.\$meetingUrl\.value: must be an absolute http or https URL/, url);
        return true;
      });
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/meetings')).json().totalCount, 0);
    await importInto(t, s.workspaceId, [line('m-ok', ACCEPTED[0] as string)]);
    assert.equal((await call(t, s.secret, 'GET', '/v1/meetings')).json().data[0].fields.$meetingUrl.value, ACCEPTED[0]);
  });
});
