// The OpenAPI document exactly as the server serves it, without a server: `npm run openapi`
// writes it to docs/openapi.json, and test/ops/openapi.test.ts fails when the two drift apart.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../app.ts';
import { Authenticator } from '../auth/authenticator.ts';
import { loadConfig } from '../config.ts';
import { openBlobStore, openDatabase } from '../runtime.ts';

export const OPENAPI_FILE = resolve(import.meta.dirname, '../../docs/openapi.json');

/** The document as text, formatted as committed. */
export function formatDocument(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export async function openApiDocument(): Promise<unknown> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-openapi-'));
  try {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SIGNING_SECRET: 'x'.repeat(32) });
    const logger = pino({ level: 'silent' });
    const db = await openDatabase(config, logger);
    const app = await buildApp(config, { db, logger, auth: new Authenticator(db), blobs: await openBlobStore(config) });
    try {
      const res = await app.inject({ method: 'GET', url: '/openapi.json' });
      return res.json();
    } finally {
      await app.close();
      await db.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  writeFileSync(OPENAPI_FILE, formatDocument(await openApiDocument()));
  console.log(`wrote ${OPENAPI_FILE}`);
}
