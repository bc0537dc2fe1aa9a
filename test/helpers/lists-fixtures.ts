// Shared by the lists, records and import tests: records loaded through the real importer, and
// an assertion for the error shape.
import assert from 'node:assert/strict';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import type { TestApp } from './app.ts';
import { operatorCtx } from '../../src/lib/context.ts';

export async function importObjects(t: TestApp, workspaceId: string, objects: Array<Record<string, unknown>>) {
  return runImport(operatorCtx(t.deps.db.kysely, workspaceId), { kinds: importKinds(), text: objects.map((o) => JSON.stringify(o)).join('\n') });
}

/** Imports n records of a kind (externalIds `${prefix}0…`) and returns their server ids in order. */
export async function seedRecords(t: TestApp, workspaceId: string, kind: 'account' | 'contact' | 'opportunity', n: number, prefix = kind): Promise<string[]> {
  const objects = Array.from({ length: n }, (_, i) => ({
    object: kind,
    externalId: `${prefix}${i}`,
    fields: {
      $name: kind === 'contact' ? { value: { firstName: `F${i}`, lastName: 'L' }, valueType: 'FULL_NAME' } : { value: `${kind} ${i}`, valueType: 'TEXT' },
    },
  }));
  const r = await importObjects(t, workspaceId, objects);
  return objects.map((o) => r.ids[kind]?.[o.externalId] as string);
}

export function assertError(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string, param?: string) {
  assert.equal(res.statusCode, status, res.statusCode === status ? '' : JSON.stringify(res.json()));
  const body = res.json();
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.equal(body.error.requestId, res.headers['x-request-id']);
  if (param !== undefined) assert.equal(body.error.param, param, JSON.stringify(body));
  return body.error;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
