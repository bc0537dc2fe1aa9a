// Every operation can answer 503 service_unavailable (the database unreachable, the server closing:
// docs/errors.md §Requests in general), so the OpenAPI document lists it for every operation, with
// its Retry-After header. Here the database is unreachable at the key's lookup, the first read of
// every request, and each operation's answer is checked against what the document promises it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { buildTestApp, type TestApp, VERSION } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { loadDocument, operationsOf, responseChecker, urlFor } from '../helpers/openapi-ops.ts';

/** An authenticator whose database refuses connections, as PostgreSQL's driver reports it. */
class Unreachable extends Authenticator {
  override authenticate(): Promise<never> {
    return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
  }
}

for (const dialect of testDialects()) {
  describe(`every operation documents the 503 it answers when the database is unreachable [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { deps: (deps) => void (deps.auth = new Unreachable(deps.db)) });
    });
    after(async () => {
      await t.close();
    });

    test('503 service_unavailable with Retry-After, as the document says, on every operation', async () => {
      const doc = await loadDocument(t);
      const ops = operationsOf(doc);
      assert.ok(ops.length > 50, `only ${ops.length} operations`);
      const checker = responseChecker();
      for (const op of ops) {
        const params = Object.fromEntries(op.pathParams.map((p) => [p.name, 'x_1']));
        const res = await t.app.inject({
          method: op.method,
          url: urlFor(op, params),
          headers: { authorization: 'Bearer rdx_abcdefgh_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG', 'service-version': VERSION },
        });
        assert.equal(res.statusCode, 503, `${op.operationId}: ${res.body}`);
        assert.equal(res.json().error.code, 'service_unavailable', op.operationId);
        assert.equal(res.headers['retry-after'], '1', op.operationId);
        assert.equal(checker.check(op, res), null, op.operationId);
        const documented = doc.paths[op.path][op.method.toLowerCase()].responses['503'];
        assert.ok(documented.headers?.['Retry-After'], `${op.operationId}: the 503 documents Retry-After`);
      }
    });
  });
}
