// The pieces of scripts/conformance.ts (docs/conformance.md) on a small stand-in for the original
// document: the cut by method and path template, the error envelope, the match of a concrete URL
// (a literal segment beats a parameter), and the reading of the demo's curl lines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { cutOriginal, operationFor } from '../../scripts/conformance-schema.ts';
import { curlRequest, shellWords } from '../../scripts/conformance-workload.ts';

const ours = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
const json = (ref: string) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const original = {
  openapi: '3.1.1',
  components: {
    schemas: {
      Contact: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
      Definitions: { type: 'object' },
      NotFound: {
        type: 'object',
        properties: { type: { const: 'not_found' }, message: { type: 'string' }, code: { type: 'string' } },
        required: ['type', 'code'],
      },
    },
  },
  paths: {
    '/v1/contacts/{contactId}': { get: { operationId: 'contact.retrieve', responses: { 200: json('Contact'), 404: json('NotFound') } } },
    '/v1/contacts/definitions': { get: { operationId: 'contact.definitions', responses: { 200: json('Definitions') } } },
    '/v1/widgets': { get: { operationId: 'widget.list', responses: { 200: json('Definitions') } } },
  },
};

test('the cut keeps the operations both serve, matched by method and path template', () => {
  const cut = cutOriginal(original, ours);
  assert.deepEqual(cut.operations.map((o) => `${o.key} ${o.ourId} ${o.theirId}`).sort(), [
    'GET /v1/contacts/definitions getContactDefinitions contact.definitions',
    'GET /v1/contacts/{} getContact contact.retrieve',
  ]);
  assert.deepEqual(cut.onlyTheirs, ['GET /v1/widgets (widget.list)']);
  assert.ok(cut.onlyOurs.includes('POST /v1/contacts (createContact)'));
  const retrieve = operationFor(cut.operations, 'GET', '/v1/contacts/con_1?x=1')!;
  assert.equal(retrieve.theirId, 'contact.retrieve');
  assert.equal(operationFor(cut.operations, 'GET', '/v1/contacts/definitions')!.theirId, 'contact.definitions');
  assert.equal(operationFor(cut.operations, 'POST', '/v1/contacts/con_1'), undefined);
  // A path only Rolodex serves is not taken for the original's template it also fits.
  const noDefinitions = cutOriginal({ ...original, paths: { '/v1/contacts/{contactId}': original.paths['/v1/contacts/{contactId}'] } }, ours);
  assert.equal(operationFor(noDefinitions.operations, 'GET', '/v1/contacts/definitions')?.theirId, 'contact.retrieve', 'without ourOnly');
  assert.equal(operationFor(noDefinitions.operations, 'GET', '/v1/contacts/definitions', noDefinitions.ourOnly), undefined);
  assert.equal(operationFor(noDefinitions.operations, 'GET', '/v1/contacts/con_1', noDefinitions.ourOnly)?.theirId, 'contact.retrieve');
  const ok = retrieve.responses.get(200)!;
  assert.equal(ok({ id: 'con_1' }), true);
  assert.equal(ok({ id: 'con_1', extra: 1 }), false);
  const notFound = retrieve.responses.get(404)!;
  // Errors travel wrapped; the envelope is closed, the original's error object inside is open.
  assert.equal(notFound({ error: { type: 'not_found', code: 'not_found', message: 'm', requestId: 'req_1' } }), true);
  assert.equal(notFound({ type: 'not_found', code: 'not_found' }), false);
  assert.equal(notFound({ error: { type: 'bad_request', code: 'x' } }), false);
  assert.equal(notFound({ error: { type: 'not_found', code: 'x' }, extra: 1 }), false);
});

test('a demo curl line reads as the request curl sends', () => {
  const line = `curl -s -g -X POST -H "Authorization: Bearer rdx_k" -H "Service-Version: 2026-03-01" -H "Content-Type: application/json" -d '{"fields":{"$name":"A b"}}' 'http://h:1/v1/contacts?$name[equal]=x'   # a comment`;
  assert.deepEqual(curlRequest(line), {
    method: 'POST',
    url: 'http://h:1/v1/contacts?$name[equal]=x',
    headers: { authorization: 'Bearer rdx_k', 'service-version': '2026-03-01', 'content-type': 'application/json' },
    body: '{"fields":{"$name":"A b"}}',
  });
  assert.deepEqual(curlRequest('curl -s -H "A: b" http://h/v1/x').method, 'GET');
  assert.deepEqual(shellWords(`a 'b c'"d" e#f # g`), ['a', 'b cd', 'e#f']);
});
