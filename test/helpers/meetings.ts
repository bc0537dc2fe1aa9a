// Fixtures of the meetings suites: records written as every records writer writes them
// (docs/records.md: stored values, value index, relationship rows), transcript files, and API calls
// checked against the served OpenAPI document.
import assert from 'node:assert/strict';
import { loadDefinitions } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { isoNow, newId } from '../../src/lib/ids.ts';
import { valueRows } from '../../src/records/index/values.ts';
import { replaceRelationships } from '../../src/records/repository.ts';
import { replaceValues } from '../../src/records/index/repository.ts';
import type { RecordKind } from '../../src/records/tables.ts';
import { call, type TestApp } from './app.ts';
import { createSession, putBytes, uploadFile } from './files.ts';
import type { Operation, ResponseChecker } from './openapi-ops.ts';
import { write } from '../../src/db/write.ts';

const PREFIX = { account: 'acc', contact: 'con', opportunity: 'opp', task: 'tsk', note: 'nte' } as const;

/** Writes (or rewrites) a record with its value index and its own relationship rows. */
export async function putRecord(
  t: TestApp,
  ws: string,
  kind: RecordKind,
  values: Record<string, unknown>,
  relationships: Record<string, string[]> = {},
  id = newId(PREFIX[kind]),
): Promise<string> {
  const db = t.deps.db.kysely;
  const ctx = operatorCtx(db, ws);
  const defs = await loadDefinitions(ctx, { objectType: kind });
  assert.ok(defs);
  const at = isoNow();
  await write(db, async (tx) => {
    await tx.deleteFrom('records').where('id', '=', id).execute();
    await tx
      .insertInto('records')
      .values({ id, workspace_id: ws, kind, external_id: null, fields: JSON.stringify(values), created_at: at, updated_at: at })
      .execute();
    await replaceValues(tx, [id], valueRows(ws, defs, id, values));
    const rows = Object.entries(relationships).flatMap(([name, targets]) =>
      targets.map((target_id, position) => ({ source_id: id, name, object_type: name === '$account' ? 'account' : 'contact', target_id, position })),
    );
    await replaceRelationships(tx, [id], rows);
  });
  return id;
}

/** A COMPLETED transcript file (purpose meeting_transcript) holding `text`. */
export async function transcript(t: TestApp, secret: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const f = await uploadFile(t, secret, Buffer.from(text), { filename: 'call.txt', mimeType: 'text/plain', purpose: 'meeting_transcript', ...extra });
  return f.id;
}

/** A PENDING transcript file: created and uploaded, never completed. */
export async function pendingTranscript(t: TestApp, secret: string): Promise<string> {
  const s = await createSession(t, secret, { filename: 'p.txt', mimeType: 'text/plain', sizeBytes: 3, purpose: 'meeting_transcript' });
  await putBytes(t, s.uploadUrl, s.uploadHeaders, Buffer.from('abc'));
  return s.id;
}

export const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

export function meetingBody(fields: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) {
  return { fields: { $title: 'Weekly sync', $startDate: ago(7_200_000), $endDate: ago(3_600_000), ...fields }, ...rest };
}

/** Calls the API and checks the answer against the served document. */
export function checkedCall(t: TestApp, ops: Map<string, Operation>, checker: ResponseChecker) {
  return async (secret: string, operationId: string, method: 'GET' | 'POST', url: string, body?: unknown, extra: Record<string, string> = {}) => {
    const res = await call(t, secret, method, url, body, extra);
    const op = ops.get(operationId);
    assert.ok(op, `${operationId} is served`);
    const why = checker.check(op, res);
    assert.equal(why, null, `${method} ${url}: ${why}`);
    return res;
  };
}
