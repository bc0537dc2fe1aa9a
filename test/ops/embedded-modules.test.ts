// The embedded mode (SQLite, disk blobs, no Redis, no SMTP) loads none of the drivers of the
// services it does not use, nor the MCP SDK before a request to /mcp, nor the HTML parser before
// an enrichment run reads a page, nor libphonenumber-js before a telephone number is checked,
// nor Swagger UI (with its static files' server) before a request under /docs, nor Ajv and
// Fastify's schema compilers before a route's schema is compiled, nor Node's bundled fetch, which
// it never calls: a started server's loaded packages are listed by a child process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('../helpers/loaded-modules.ts', import.meta.url));
const UNUSED = [
  /^postgres$/,
  /^pg$/,
  /^@aws-sdk\//,
  /^@smithy\//,
  /^ioredis$/,
  /^nodemailer$/,
  /^@modelcontextprotocol\//,
  /^zod$/,
  /^htmlparser2$/,
  /^node:undici$/,
  /^libphonenumber-js$/,
  /^@fastify\/swagger-ui$/,
  /^@fastify\/static$/,
  /^glob$/,
  /^ajv$/,
  /^@fastify\/ajv-compiler$/,
  /^@fastify\/fast-json-stringify-compiler$/,
];

test('an embedded server loads neither PostgreSQL, S3, Redis nor SMTP code, nor MCP, the HTML parser or the schema compilers before they are needed', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rolodex-modules-'));
  try {
    const r = spawnSync(process.execPath, [CHILD, dataDir], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    const loaded = r.stdout.split('\n').filter(Boolean);
    assert.ok(loaded.includes('fastify') && loaded.includes('kysely'), `the app was built: ${loaded.join(' ')}`);
    assert.deepEqual(
      loaded.filter((p) => UNUSED.some((re) => re.test(p))),
      [],
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
