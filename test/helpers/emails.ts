// Fixtures for the e-mail suites: a workspace with two users, their keys and a workspace key,
// mailboxes of both visibilities, and files to attach (completed, pending, and one over 3 MB).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { call, keyFor, type TestApp } from './app.ts';

export function importInto(t: TestApp, workspaceId: string, objects: Array<Record<string, unknown>>) {
  return runImport(operatorCtx(t.deps.db.kysely, workspaceId), {
    kinds: importKinds({ blobs: t.deps.blobs }),
    text: objects.map((o) => JSON.stringify(o)).join('\n'),
  });
}

export interface EmailWorld {
  workspaceId: string;
  tag: string;
  users: { ann: string; bob: string };
  keys: { ann: string; bob: string; workspace: string };
  /** ann owns `full` (others see FULL) and `meta` (others see METADATA); bob owns `bob`. */
  addresses: { full: string; meta: string; bob: string };
  mailboxes: { full: string; meta: string; bob: string };
  files: { small: string; second: string; big: string; edge: string; pending: string };
  smallBytes: Buffer;
}

/** Files of these sizes, imported as COMPLETED api files; the pending one is made through the API. */
/** `bigFiles`: also files of exactly the attachment limit (`edge`) and one byte over it (`big`); otherwise both are ''. */
export async function seedEmailWorld(t: TestApp, opts: { scopes?: Parameters<typeof keyFor>[3]; bigFiles?: boolean } = {}): Promise<EmailWorld> {
  const db = t.deps.db.kysely;
  const tag = randomBytes(4).toString('hex');
  const ws = await createWorkspace(systemCtx(db), { name: `Emails ${tag}` });
  const dir = mkdtempSync(join(tmpdir(), 'rolodex-email-files-'));
  const smallBytes = Buffer.from(`attachment bytes ${tag}\n`);
  writeFileSync(join(dir, 'small.txt'), smallBytes);
  writeFileSync(join(dir, 'second.bin'), randomBytes(70_000));
  const LIMIT = 20 * 1024 * 1024;
  if (opts.bigFiles) {
    writeFileSync(join(dir, 'edge.bin'), Buffer.alloc(LIMIT, 7));
    writeFileSync(join(dir, 'big.bin'), Buffer.alloc(LIMIT + 1, 7));
  }
  const addresses = { full: `ann-${tag}@acme.test`, meta: `ann.private-${tag}@acme.test`, bob: `bob-${tag}@acme.test` };
  try {
    const imported = await importInto(t, ws.id, [
      { object: 'user', externalId: 'u-ann', email: addresses.full, firstName: 'Ann', role: 'member' },
      { object: 'user', externalId: 'u-bob', email: addresses.bob, firstName: 'Bob', role: 'admin' },
      { object: 'mailbox', externalId: 'mb-full', user: 'u-ann', address: addresses.full },
      { object: 'mailbox', externalId: 'mb-meta', user: 'u-ann', address: addresses.meta, othersSee: 'METADATA' },
      { object: 'mailbox', externalId: 'mb-bob', user: 'u-bob', address: addresses.bob, othersSee: 'FULL' },
      { object: 'file', externalId: 'f-small', source: 'api', filename: 'notes.txt', mimeType: 'text/plain', path: join(dir, 'small.txt') },
      { object: 'file', externalId: 'f-second', source: 'api', filename: 'data.bin', mimeType: 'application/octet-stream', path: join(dir, 'second.bin') },
      ...(opts.bigFiles
        ? ['edge', 'big'].map((n) => ({
            object: 'file',
            externalId: `f-${n}`,
            source: 'api',
            filename: `${n}.bin`,
            mimeType: 'application/octet-stream',
            path: join(dir, `${n}.bin`),
          }))
        : []),
    ]);
    const id = (object: string, ext: string) => imported.ids[object]?.[ext] as string;
    const users = { ann: id('user', 'u-ann'), bob: id('user', 'u-bob') };
    const scopes = opts.scopes ?? null;
    const keys = {
      ann: await keyFor(t, ws.id, users.ann, scopes),
      bob: await keyFor(t, ws.id, users.bob, scopes),
      workspace: await keyFor(t, ws.id, null, scopes),
    };
    const pending = await call(t, keys.ann, 'POST', '/v1/files', { filename: 'later.txt', mimeType: 'text/plain', sizeBytes: 5 });
    assert.equal(pending.statusCode, 200, pending.body);
    return {
      workspaceId: ws.id,
      tag,
      users,
      keys,
      addresses,
      mailboxes: { full: id('mailbox', 'mb-full'), meta: id('mailbox', 'mb-meta'), bob: id('mailbox', 'mb-bob') },
      files: {
        small: id('file', 'f-small'),
        second: id('file', 'f-second'),
        big: id('file', 'f-big') ?? '',
        edge: id('file', 'f-edge') ?? '',
        pending: pending.json().id,
      },
      smallBytes,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The sum of a metric's samples (every label set) in the app's /metrics text. */
export async function metric(t: TestApp, name: string): Promise<number> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

export function sendBody(from: string, extra: Record<string, unknown> = {}) {
  return { from, to: ['carol@example.test'], subject: 'Hello', messageBody: { contentType: 'TEXT', content: 'Hi Carol' }, ...extra };
}
