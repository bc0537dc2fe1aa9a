// Bad input is refused, never reshaped (docs/errors.md §Dates, §Request bodies, §Numbers in query
// strings, §Before routing): impossible calendar dates, bytes that are not UTF-8, a body in another
// charset or content coding, integers in query strings written any other way than decimal digits,
// and what Node's HTTP parser refuses before routing, answered in the documented shape.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { ImportFailed } from '../../src/import/run.ts';
import { call, eachDialect, headers, seedWorkspace } from '../helpers/app.ts';
import { importObjects } from '../helpers/lists-fixtures.ts';
import { meetingBody } from '../helpers/meetings.ts';

const IMPOSSIBLE = [
  '2026-02-30T00:00:00Z',
  '2025-02-29T10:00:00Z',
  '2026-04-31T09:00:00Z',
  '2026-03-01T24:00:00Z',
  '2026-03-01T10:60:00Z',
  '2026-03-01T10:00:00+25:00',
];

/** Sends raw bytes to `port` and resolves to everything the server answered before it closed. */
function raw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    let out = '';
    socket.on('data', (c) => (out += String(c)));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

function errorOf(answer: string): { status: number; code: string; requestId: string; header: string | undefined } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const e = (JSON.parse(body) as { error: { code: string; requestId: string } }).error;
  return { status: Number(head.split(' ')[1]), code: e.code, requestId: e.requestId, header: /x-request-id: (\S+)/i.exec(head)?.[1] };
}

eachDialect('bad input refused', (ctx) => {
  test('impossible calendar dates: 400 invalid_value in record fields and meeting dates, invalid_parameter in filters', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const date of IMPOSSIBLE) {
      const task = await call(t, s.secret, 'POST', '/v1/tasks', {
        fields: { $title: 'T', $status: 'TODO', $dueAt: date },
        relationships: { $assignedTo: s.userId },
      });
      assert.equal(task.statusCode, 400, `${date}: ${task.body}`);
      assert.deepEqual([task.json().error.code, task.json().error.param], ['invalid_value', 'fields.$dueAt']);
      const meeting = await call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $startDate: date }));
      assert.equal(meeting.statusCode, 400, `${date}: ${meeting.body}`);
      assert.deepEqual([meeting.json().error.code, meeting.json().error.param], ['invalid_value', 'fields.$startDate']);
      const listed = await call(t, s.secret, 'GET', `/v1/tasks?${encodeURIComponent('$dueAt[greaterThan]')}=${encodeURIComponent(date)}`);
      assert.equal(listed.statusCode, 400, `${date}: ${listed.body}`);
      assert.equal(listed.json().error.code, 'invalid_parameter');
    }
    const real = await call(t, s.secret, 'GET', `/v1/tasks?${encodeURIComponent('$dueAt[greaterThan]')}=${encodeURIComponent('2026-02-28T00:00:00Z')}`);
    assert.equal(real.statusCode, 200, real.body);
    // A real leap day is a date like any other.
    const leap = await call(t, s.secret, 'POST', '/v1/tasks', {
      fields: { $title: 'T', $status: 'TODO', $dueAt: '2028-02-29T09:00:00Z' },
      relationships: { $assignedTo: s.userId },
    });
    assert.equal(leap.statusCode, 200, leap.body);
    assert.equal(leap.json().fields.$dueAt.value, '2028-02-29T09:00:00.000Z');
  });

  test('rolodex import: an impossible or zone-less date of a message or an e-mail fails the import, naming line and field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const setup = [
      { object: 'user', externalId: 'u-ann', email: `ann-${s.workspaceId}@example.test`, role: 'member' },
      { object: 'channel', externalId: 'c', provider: 'slack', name: 'c', visibility: 'public', members: [] },
      { object: 'mailbox', externalId: 'mb', user: 'u-ann', address: `ann-${s.workspaceId}@example.test` },
    ];
    await importObjects(t, s.workspaceId, setup);
    const at = (value: string) => ({ value, valueType: 'DATETIME' });
    const lines = (date: string) => ({
      message: { object: 'message', externalId: 'm', channel: 'c', fields: { $text: { value: 'hi', valueType: 'TEXT' }, $sentAt: at(date) } },
      edited: {
        object: 'message',
        externalId: 'm',
        channel: 'c',
        fields: { $text: { value: 'hi', valueType: 'TEXT' }, $sentAt: at('2026-03-01T00:00:00Z'), $editedAt: at(date) },
      },
      email: { object: 'email', externalId: 'e', mailbox: 'mb', fields: { $sentAt: at(date), $from: { value: 'x@example.test', valueType: 'EMAIL' } } },
    });
    for (const date of [...IMPOSSIBLE, '2026-03-01T10:00:00']) {
      for (const [kind, line] of Object.entries(lines(date))) {
        const field = kind === 'edited' ? '$editedAt' : '$sentAt';
        await assert.rejects(importObjects(t, s.workspaceId, [line]), (err: unknown) => {
          assert.ok(err instanceof ImportFailed, `${date} ${kind}: ${String(err)}`);
          assert.match(err.message, new RegExp(`line 1: fields\\.\\${field}\\.value`), `${date} ${kind}`);
          return true;
        });
      }
    }
    const stored = async () => [
      (await t.deps.db.kysely.selectFrom('messages').select('id').where('workspace_id', '=', s.workspaceId).execute()).length,
      (await t.deps.db.kysely.selectFrom('emails').select('id').where('workspace_id', '=', s.workspaceId).execute()).length,
    ];
    assert.deepEqual(await stored(), [0, 0], 'nothing refused was stored');
    // The same lines with a real date (a leap day, an offset) import, stored in UTC.
    const ok = lines('2028-02-29T10:00:00+02:00');
    await importObjects(t, s.workspaceId, [ok.edited, ok.email]);
    assert.deepEqual(await stored(), [1, 1]);
    const sent = await t.deps.db.kysely.selectFrom('emails').select('sent_at').where('workspace_id', '=', s.workspaceId).executeTakeFirstOrThrow();
    assert.equal(sent.sent_at, '2028-02-29T08:00:00.000Z');
  });

  test('a JSON body that is not UTF-8 is 400 invalid_json, never stored with U+FFFD', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const bad of [[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80]]) {
      const payload = Buffer.concat([Buffer.from('{"fields":{"$name":"A'), Buffer.from(bad), Buffer.from('","$objectType":"account"}}')]);
      const res = await t.app.inject({ method: 'POST', url: '/v1/lists', headers: headers(s.secret, { 'content-type': 'application/json' }), payload });
      assert.equal(res.statusCode, 400, `${bad.join(',')}: ${res.body}`);
      assert.equal(res.json().error.code, 'invalid_json');
    }
    const ok = await t.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: headers(s.secret, { 'content-type': 'application/json; charset=UTF-8' }),
      payload: JSON.stringify({ fields: { $name: 'Zoë ✓', $objectType: 'account' } }),
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().fields.$name.value, 'Zoë ✓');
  });

  test('a body that is not JSON, or holds a prototype key, is invalid_json saying what is wrong and where', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const [payload, message] of [
      ['{"fields": {"$name": "A",}}', /not valid JSON: Expected double-quoted property name in JSON at position 25 \(line 1 column 26\)\.$/],
      ['{"fields": ', /not valid JSON: Unexpected end of JSON input\.$/],
      // The token met, its unseen character escaped, and never an excerpt of the body.
      ['\u0007{"secret": 1}', /not valid JSON: Unexpected token '\\u\{7\}'\.$/],
      ['{"fields": {"__proto__": {"x": 1}}}', /holds a "__proto__" key or a "constructor" object with a "prototype" key/],
      ['{"fields": {"constructor": {"prototype": {}}}}', /holds a "__proto__" key/],
      // Past 10 characters V8 quotes the body around the token with dots, at its start, middle or
      // end; that excerpt is left out as the short one is.
      ['secret=hunter2&user=ann', /not valid JSON: Unexpected token 's'\.$/],
      [`[${'1,'.repeat(30)}"secret",x${',1'.repeat(30)}]`, /not valid JSON: Unexpected token 'x'\.$/],
      [`[${'1,'.repeat(30)}"secret",x]`, /not valid JSON: Unexpected token 'x'\.$/],
      ['undefined', /^The request body is not valid JSON\.$/],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/lists', headers: headers(s.secret, { 'content-type': 'application/json' }), payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error.code, 'invalid_json');
      assert.match(res.json().error.message, message);
      assert.doesNotMatch(res.json().error.message, /secret|hunter|1,1|undefined/);
    }
  });

  test('a body declared in a charset other than UTF-8 is 415 unsupported_media_type', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const type of ['application/json; charset=iso-8859-1', 'application/json;charset="latin1"', 'application/json; charset=utf-16']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/lists',
        headers: headers(s.secret, { 'content-type': type }),
        payload: '{"fields":{"$name":"A","$objectType":"account"}}',
      });
      assert.equal(res.statusCode, 415, `${type}: ${res.body}`);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['unsupported_media_type', 'Content-Type']);
    }
  });

  test('a body declared content-coded is 415 naming Content-Encoding, never read as plain JSON; identity is plain', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { gzipSync } = await import('node:zlib');
    const json = '{"fields":{"$name":"A","$objectType":"account"}}';
    for (const [coding, payload] of [
      ['gzip', gzipSync(json)],
      ['br', json],
      ['deflate, gzip', json],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/lists',
        headers: headers(s.secret, { 'content-type': 'application/json', 'content-encoding': coding }),
        payload,
      });
      assert.equal(res.statusCode, 415, `${coding}: ${res.body}`);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['unsupported_media_type', 'Content-Encoding']);
    }
    const lists = await call(t, s.secret, 'GET', '/v1/lists');
    assert.equal(lists.json().totalCount, 0, 'nothing was created');
    const plain = await t.app.inject({
      method: 'POST',
      url: '/v1/lists',
      headers: headers(s.secret, { 'content-type': 'application/json', 'content-encoding': 'identity' }),
      payload: json,
    });
    assert.equal(plain.statusCode, 200, plain.body);
  });

  test('limit and offset only as decimal digits: 1e1, 0x10, " 5 ", +5, -0 and 5.0 are 400 invalid_parameter', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const name of ['limit', 'offset']) {
      for (const v of ['1e1', '0x10', ' 5 ', '+5', '-0', '5.0', '', '0b1']) {
        const res = await call(t, s.secret, 'GET', `/v1/lists?${name}=${encodeURIComponent(v)}`);
        assert.equal(res.statusCode, 400, `${name}=${JSON.stringify(v)}: ${res.body}`);
        assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_parameter', name]);
      }
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists?limit=10&offset=0')).statusCode, 200);
  });

  test('a length or count limit is named as docs/errors.md §Lengths words it, in paths, queries and bodies alike', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const cases: Array<[string, Awaited<ReturnType<typeof call>>, string, string]> = [
      [
        'an id over 255',
        await call(t, s.secret, 'GET', `/v1/contacts/${'x'.repeat(256)}`),
        'id',
        'Invalid path parameter "id": it must be 1 to 255 characters.',
      ],
      ['an empty id', await call(t, s.secret, 'GET', '/v1/contacts/'), 'id', 'Invalid path parameter "id": it must be 1 to 255 characters.'],
      [
        'a filter key given 21 times',
        await call(t, s.secret, 'GET', `/v1/contacts?${Array.from({ length: 21 }, (_, i) => `$name=${i}`).join('&')}`),
        '$name',
        'Invalid query parameter "$name": it must have at most 20 values.',
      ],
      [
        'a filename over 255',
        await call(t, s.secret, 'POST', '/v1/files', { filename: 'x'.repeat(256), mimeType: 'text/plain', sizeBytes: 1 }),
        'filename',
        '"filename" must be 1 to 255 characters.',
      ],
      [
        'a meeting transcript given as no file ids',
        await call(t, s.secret, 'POST', '/v1/meetings', {
          fields: { $title: 'Call', $startDate: '2026-01-01T10:00:00Z', $endDate: '2026-01-01T11:00:00Z' },
          relationships: { $transcript: [] },
        }),
        'relationships.$transcript',
        '"relationships.$transcript" must have exactly 1 value.',
      ],
    ];
    for (const [name, res, param, message] of cases) {
      assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
      assert.deepEqual([res.json().error.param, res.json().error.message], [param, message], name);
    }
  });

  test('what Node refuses before routing is answered in the documented shape with a request id', async () => {
    const t = ctx();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as { port: number }).port;
    const cases: Array<[string, string, number, string]> = [
      ['oversized headers', `GET /v1/lists HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
      ['an oversized URL', `GET /v1/lists?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'headers_too_large'],
      [
        'Content-Length with Transfer-Encoding',
        'POST /v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
        'malformed_request',
      ],
      ['a DEL byte in a header', 'GET /v1/lists HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\n\r\n', 400, 'malformed_request'],
      ['a malformed request line', 'GET\r\n\r\n', 400, 'malformed_request'],
    ];
    for (const [name, bytes, status, code] of cases) {
      const e = errorOf(await raw(port, bytes));
      assert.equal(e.status, status, name);
      assert.equal(e.code, code, name);
      assert.match(e.requestId, /^req_/, name);
      assert.equal(e.header, e.requestId, name);
    }
  });
});
