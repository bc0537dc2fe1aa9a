// The tools' way into the API (src/mcp/dispatch.ts, docs/mcp.md §Tools): a request sent in memory
// through the app's own request handler answers what the same request through app.inject (the
// way every other test calls the API) answers, status and body, on both databases: reads, list
// queries, validation and routing refusals, authentication and scope refusals, creates with an
// Idempotency-Key (one path replays what the other stored), deletes.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { dispatchInMemory } from '../../src/mcp/dispatch.ts';
import { call, eachDialect, keyFor, seedWorkspace, type Seeded, VERSION } from '../helpers/app.ts';

const strip = (text: string) => text.replace(/req_[0-9a-z]{26}/g, '<REQ>');

interface Sent {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
}

eachDialect('mcp dispatch', (ctx) => {
  let s: Seeded;
  let accountId = '';
  before(async () => {
    const t = ctx();
    s = await seedWorkspace(t);
    accountId = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Dispatched', $website: ['https://dispatch.example'] } })).json().id;
  });

  // The caller's Host, as the endpoint passes it on (inject's own is this one).
  const headersOf = (secret: string | null, sent: Sent) => ({
    host: 'localhost:80',
    ...(secret ? { authorization: `Bearer ${secret}` } : {}),
    'service-version': VERSION,
    ...(sent.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...sent.headers,
  });

  async function both(secret: string | null, sent: Sent) {
    const t = ctx();
    const payload = sent.body === undefined ? undefined : JSON.stringify(sent.body);
    const injected = await t.app.inject({ method: sent.method, url: sent.url, headers: headersOf(secret, sent), ...(payload ? { payload } : {}) });
    const memory = await dispatchInMemory(t.app, {
      method: sent.method,
      url: sent.url,
      headers: headersOf(secret, sent),
      body: payload,
      remoteAddress: '127.0.0.1',
      encrypted: false,
    });
    return { injected: { status: injected.statusCode, body: strip(injected.payload) }, memory: { status: memory.status, body: strip(memory.body) } };
  }

  test('reads, list queries and refusals answer as app.inject answers', async () => {
    const t = ctx();
    const scoped = await keyFor(t, s.workspaceId, s.userId, ['contacts:read']);
    const cases: [string | null, Sent][] = [
      [s.secret, { method: 'GET', url: `/v1/accounts/${accountId}` }],
      [s.secret, { method: 'GET', url: '/v1/accounts?limit=1&%24name%5Bcontains%5D=dispatch' }],
      [s.secret, { method: 'GET', url: '/v1/accounts/definitions' }],
      [s.secret, { method: 'GET', url: '/v1/accounts/acc_01aaaaaaaaaaaaaaaaaaaaaaaa' }],
      [s.secret, { method: 'GET', url: '/v1/accounts?limit=9999' }],
      [s.secret, { method: 'GET', url: '/v1/nothing/here' }],
      [s.secret, { method: 'POST', url: '/v1/accounts', body: { fields: { $name: 'x' }, extra: 1 } }],
      [s.secret, { method: 'POST', url: '/v1/accounts', body: { fields: { nope: 1 } } }],
      [null, { method: 'GET', url: `/v1/accounts/${accountId}` }],
      ['sk_not_a_key', { method: 'GET', url: `/v1/accounts/${accountId}` }],
      [scoped, { method: 'GET', url: `/v1/accounts/${accountId}` }],
      [s.secret, { method: 'GET', url: `/v1/accounts/${accountId}`, headers: { 'service-version': '1999-01-01' } }],
    ];
    for (const [secret, sent] of cases) {
      const { injected, memory } = await both(secret, sent);
      assert.deepEqual(memory, injected, `${sent.method} ${sent.url}`);
    }
  });

  test('a create through one path is replayed by its Idempotency-Key through the other; a delete answers alike', async () => {
    const t = ctx();
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'dispatch-1' };
    const body = JSON.stringify({ fields: { $name: 'Once' } });
    const first = await dispatchInMemory(t.app, {
      method: 'POST',
      url: '/v1/accounts',
      headers: { host: 'localhost:80', authorization: `Bearer ${s.secret}`, 'service-version': VERSION, ...headers },
      body,
      remoteAddress: '127.0.0.1',
      encrypted: false,
    });
    assert.equal(first.status, 200);
    const again = await call(t, s.secret, 'POST', '/v1/accounts', JSON.parse(body), { 'idempotency-key': 'dispatch-1' });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.payload, first.body, 'the stored answer, byte for byte');
    const reused = await both(s.secret, {
      method: 'POST',
      url: '/v1/accounts',
      body: { fields: { $name: 'Other' } },
      headers: { 'idempotency-key': 'dispatch-1' },
    });
    assert.deepEqual(reused.memory, reused.injected);
    // Two records alike, one deleted through each path: the same answer but for the id.
    const [a = '', b = ''] = await Promise.all(
      ['Twin', 'Twin'].map(async (name) => (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: name } })).json().id as string),
    );
    const viaInject = await call(t, s.secret, 'DELETE', `/v1/accounts/${a}`);
    const viaMemory = await dispatchInMemory(t.app, {
      method: 'DELETE',
      url: `/v1/accounts/${b}`,
      headers: { host: 'localhost:80', authorization: `Bearer ${s.secret}`, 'service-version': VERSION },
      remoteAddress: '127.0.0.1',
      encrypted: false,
    });
    assert.equal(viaMemory.status, viaInject.statusCode);
    const same = (text: string, id: string) =>
      strip(text)
        .replaceAll(id, '<ID>')
        .replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"<TIME>"');
    assert.equal(same(viaMemory.body, b), same(viaInject.payload, a));
  });
});
