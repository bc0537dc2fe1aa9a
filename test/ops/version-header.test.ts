// VERSION_HEADERS (docs/design.md §Requests, docs/config.md; Service-Version and Lightfield-Version
// by default): every accepted name works, the
// response echoes the name the request used, and a missing, unsupported or contradicted version
// is 400 version_header naming the accepted names and versions.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { eachDialect, seedWorkspace, VERSION } from '../helpers/app.ts';

const validate = (t: { app: { inject: (o: object) => Promise<any> } }, secret: string, extra: Record<string, string>) =>
  t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { authorization: `Bearer ${secret}`, ...extra } });

function versionError(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, param: string) {
  assert.equal(res.statusCode, 400, JSON.stringify(res.json()));
  const err = res.json().error;
  assert.equal(err.code, 'version_header');
  assert.equal(err.param, param);
  assert.equal(err.requestId, res.headers['x-request-id']);
  assert.match(err.message, /2026-03-01/, 'names the supported versions');
  return err.message as string;
}

// With no configuration, the original's clients (Lightfield-Version) work unchanged.
eachDialect('version header aliases by default', (ctx) => {
  test('either accepted name is enough; the answer echoes the name used beside Service-Version', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const alias = await validate(t, s.secret, { 'lightfield-version': VERSION });
    assert.equal(alias.statusCode, 200, alias.body);
    assert.equal(alias.headers['service-version'], VERSION);
    assert.equal(alias.headers['lightfield-version'], VERSION);
    const plain = await validate(t, s.secret, { 'service-version': VERSION });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['service-version'], VERSION);
    assert.equal(plain.headers['lightfield-version'], undefined, 'no echo of a name the request did not use');
    const both = await validate(t, s.secret, { 'service-version': VERSION, 'Lightfield-Version': VERSION });
    assert.equal(both.statusCode, 200);
    assert.equal(both.headers['lightfield-version'], VERSION);
    // Refused before the version check (401): the echo still tells the client its header was seen.
    const unauth = await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { 'lightfield-version': VERSION } });
    assert.equal(unauth.statusCode, 401);
    assert.equal(unauth.headers['lightfield-version'], VERSION);
  });

  test("the router's own refusal (a path that is not percent-encoded UTF-8) echoes the name used too", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const url of ['/v1/lists/%E9', '/v1/lists/%']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${s.secret}`, 'lightfield-version': VERSION } });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_parameter', 'path']);
      assert.equal(res.headers['service-version'], VERSION);
      assert.equal(res.headers['lightfield-version'], VERSION, url);
    }
  });

  test('missing, unsupported under either name, or two names that disagree: 400 version_header', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const missing = versionError(await validate(t, s.secret, {}), 'Service-Version');
    assert.match(missing, /Service-Version/);
    assert.match(missing, /Lightfield-Version/);
    const old = versionError(await validate(t, s.secret, { 'lightfield-version': '2025-01-01' }), 'Lightfield-Version');
    assert.match(old, /Lightfield-Version header "2025-01-01"/);
    versionError(await validate(t, s.secret, { 'service-version': 'latest' }), 'Service-Version');
    const clash = versionError(await validate(t, s.secret, { 'service-version': VERSION, 'lightfield-version': '2025-01-01' }), 'Lightfield-Version');
    assert.match(clash, /disagree/);
    assert.match(clash, /Service-Version is "2026-03-01" but Lightfield-Version is "2025-01-01"/);
  });

  test('a version header sent twice is refused as sent twice, not as the unknown version "a, b"', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const [name, values] of [
      ['Service-Version', [VERSION, VERSION]],
      ['Lightfield-Version', [VERSION, '2025-01-01']],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/auth/validate', headers: { authorization: `Bearer ${s.secret}`, [name]: [...values] } });
      const message = versionError(res, name);
      assert.match(message, new RegExp(`more than one ${name} header`));
      assert.doesNotMatch(message, /is not a supported version/);
    }
    // Beside the other accepted name, the header sent twice is named as such, not as a disagreement.
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/auth/validate',
      headers: { authorization: `Bearer ${s.secret}`, 'service-version': [VERSION, VERSION], 'lightfield-version': VERSION },
    });
    assert.match(versionError(res, 'Service-Version'), /more than one Service-Version header/);
  });
});

eachDialect(
  'version header without aliases',
  (ctx) => {
    test('VERSION_HEADERS=Service-Version accepts only Service-Version and echoes nothing else', async () => {
      const t = ctx();
      const s = await seedWorkspace(t);
      const msg = versionError(await validate(t, s.secret, { 'lightfield-version': VERSION }), 'Service-Version');
      assert.match(msg, /send Service-Version/);
      assert.doesNotMatch(msg, /Lightfield/);
      const res = await validate(t, s.secret, { 'service-version': VERSION, 'lightfield-version': '1999-01-01' });
      assert.equal(res.statusCode, 200, 'a header that is not accepted is ignored');
      assert.equal(res.headers['lightfield-version'], undefined);
    });
  },
  { env: { VERSION_HEADERS: 'Service-Version' } },
);

test('VERSION_HEADERS is parsed and validated once, naming the variable', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-version-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const load = (v?: string) => loadConfig({ DATA_DIR: dir, SIGNING_SECRET: 'x'.repeat(32), ...(v === undefined ? {} : { VERSION_HEADERS: v }) });
  assert.deepEqual(load().versionHeaders, ['Service-Version', 'Lightfield-Version']);
  assert.deepEqual(load('').versionHeaders, ['Service-Version', 'Lightfield-Version']);
  assert.deepEqual(load('Service-Version').versionHeaders, ['Service-Version']);
  assert.deepEqual(load(' Lightfield-Version ,service-version').versionHeaders, ['Lightfield-Version', 'service-version']);
  const refused: Array<[string, RegExp]> = [
    ['Lightfield-Version', /Service-Version is missing/],
    ['Service-Version,,X-Version', /a name is empty/],
    ['Service-Version,Bad Name', /"Bad Name" is not a valid header name/],
    ['Service-Version,Version:', /not a valid header name/],
    ['Service-Version,Authorization', /used by the service for another purpose/],
    ['Service-Version,Idempotency-Key', /another purpose/],
    ['Service-Version,X-Version,x-version', /"x-version" is named twice/],
  ];
  for (const [value, why] of refused) {
    assert.throws(
      () => load(value),
      (err: unknown) => err instanceof ConfigError && err.param === 'VERSION_HEADERS' && why.test(err.message) && err.message.includes(value),
      value,
    );
  }
});
