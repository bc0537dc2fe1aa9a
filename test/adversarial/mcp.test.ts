// The MCP tools against the matrices (docs/mcp.md): every served operation sent through
// read_from_rolodex or write_to_rolodex answers what the same REST request answers: the owner's
// reads byte for byte, another workspace's key with A's ids the same refusal, a key missing a
// scope the same 403; the three tools that make no API call (MCP_TOOL_CALLS) answer B's keys, of
// any scope, of B alone. No tool result holds a key's secret or, for B, any byte of A's data.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PUBLIC_SCOPES, type Scope } from '../../src/auth/scopes.ts';
import { eachDialect, keyFor } from '../helpers/app.ts';
import { type Canary, leaked, seedCanary, tableCounts } from '../helpers/canary.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { createUser } from '../../src/users/service.ts';
import { loadDocument, type Operation, operationsOf } from '../helpers/openapi-ops.ts';
import { CONTENT_BYTES, contentRequests, happyRequest, MCP_TOOL_CALLS, MCP_TOOLS, OBJECT_SCOPES, SCOPE_TABLE, sendHappy } from './operations.ts';

const strip = (text: string) => text.replace(/req_[0-9a-z]{26}/g, '<REQ>');

eachDialect('mcp matrix', (ctx) => {
  let ops: Operation[] = [];
  let a: Canary;
  let b: Canary;
  let base = '';
  const clients: Client[] = [];
  before(async () => {
    const t = ctx();
    ops = operationsOf(await loadDocument(t));
    const served = new Set(ops.map((o) => o.operationId));
    a = await seedCanary(t, 'A', served);
    b = await seedCanary(t, 'B', served);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const c of clients) await c.close();
  });

  async function client(secret: string): Promise<Client> {
    const c = new Client({ name: 'matrix', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
    clients.push(c);
    return c;
  }

  async function viaTool(c: Client, op: Operation, req: ReturnType<typeof happyRequest>, key?: string) {
    const args =
      op.method === 'GET'
        ? { name: 'read_from_rolodex', arguments: { path: req.url } }
        : {
            name: 'write_to_rolodex',
            arguments: { method: op.method, path: req.url, ...(req.body !== undefined ? { body: req.body } : {}), ...(key ? { idempotencyKey: key } : {}) },
          };
    const r = (await c.callTool(args)) as { content: { text: string }[]; isError?: boolean };
    return { isError: r.isError === true, text: r.content[0]?.text ?? '' };
  }

  test('the served tools are the table of tools', async () => {
    const c = await client(a.secret);
    assert.deepEqual((await c.listTools()).tools.map((x) => x.name).sort(), [...MCP_TOOLS].sort());
    assert.deepEqual(Object.keys(MCP_TOOL_CALLS).sort(), [...MCP_TOOLS].sort(), 'every tool has its row of calls');
  });

  test("the tools that make no API call answer B's keys, of any scope, of B alone, and hold no secret", async () => {
    const t = ctx();
    const scoped = await keyFor(t, b.workspaceId, b.userId, ['channels:read']);
    const secrets = [a.secret, b.secret, scoped];
    const [owner, full, narrow] = [await client(a.secret), await client(b.secret), await client(scoped)];
    const toolCalls = Object.entries(MCP_TOOL_CALLS).flatMap(([name, calls]) => (calls === 'operations' ? [] : calls(ops).map((args) => ({ name, args }))));
    for (const { name, args } of toolCalls) {
      const what = `${name} ${JSON.stringify(args)}`;
      const answers = [];
      for (const c of [owner, full, narrow]) {
        const r = (await c.callTool({ name, arguments: args })) as { content: { text: string }[]; isError?: boolean };
        const text = r.content[0]?.text ?? '';
        assert.equal(r.isError, undefined, `${what}: ${text}`);
        for (const secret of secrets) assert.ok(!text.includes(secret), `${what}: a key's secret in a tool result`);
        answers.push(text);
      }
      const [ofA, ofB, ofNarrow] = answers as [string, string, string];
      for (const text of [ofB, ofNarrow]) assert.deepEqual(leaked(text, a.secrets()), [], `${what}: A's data in B's tool result`);
      if (name !== 'get_current_user') {
        // The API's description is the same for every workspace and every scope.
        assert.equal(ofB, ofA, what);
        assert.equal(ofNarrow, ofA, what);
        continue;
      }
      const me = (text: string) => JSON.parse(text) as { id: string; workspace: { id: string }; scopes: string[]; fullAccess: boolean };
      assert.deepEqual([me(ofA).id, me(ofA).workspace.id], [a.userId, a.workspaceId]);
      assert.deepEqual([me(ofB).id, me(ofB).workspace.id, me(ofB).fullAccess], [b.userId, b.workspaceId, true]);
      assert.deepEqual([me(ofNarrow).id, me(ofNarrow).workspace.id, me(ofNarrow).scopes], [b.userId, b.workspaceId, ['channels:read']]);
    }
    console.log(`# mcp matrix [${t.dialect}]: ${toolCalls.length} calls of the tools that make no API call, for A, B and a one-scope key of B`);
  });

  test("every read through the tool is the owner's REST read, byte for byte, and holds no secret", async () => {
    const t = ctx();
    const c = await client(a.secret);
    let compared = 0;
    for (const op of ops.filter((o) => o.method === 'GET')) {
      const req = happyRequest(op, a);
      const rest = await sendHappy(t, a.secret, req);
      const tool = await viaTool(c, op, req);
      assert.equal(tool.isError, rest.statusCode >= 400, op.operationId);
      // A download address is signed anew on every call; its shape is compared instead.
      if (op.operationId === 'getFileUrl') assert.deepEqual(Object.keys(JSON.parse(tool.text)).sort(), Object.keys(rest.json()).sort());
      else assert.equal(strip(tool.text), strip(rest.body), op.operationId);
      assert.ok(!tool.text.includes(a.secret), `${op.operationId}: the key's secret in a tool result`);
      compared++;
    }
    console.log(`# mcp matrix [${t.dialect}]: ${compared} reads through read_from_rolodex equal to REST`);
  });

  test("B's key through the tools with A's ids gets the REST answer, sees nothing of A", async () => {
    const t = ctx();
    const c = await client(b.secret);
    let calls = 0;
    const ordered = [...ops].sort((x, y) => Number(x.method !== 'GET') - Number(y.method !== 'GET'));
    for (const op of ordered.filter((o) => o.pathParams.length > 0)) {
      const req = happyRequest(op, a);
      const tool = await viaTool(c, op, req);
      const rest = await sendHappy(t, b.secret, req);
      assert.equal(tool.isError, true, `${op.operationId}: B reached A's object through the tool`);
      assert.equal(strip(tool.text), strip(rest.body), op.operationId);
      // The ids asked for come back in the error message, as they do over REST.
      const asked = Object.values(req.params);
      assert.deepEqual(
        leaked(
          tool.text,
          a.secrets().filter((x) => !asked.includes(x)),
        ),
        [],
        `${op.operationId}: A's data in B's tool result`,
      );
      calls++;
    }
    console.log(`# mcp matrix [${t.dialect}]: ${calls} calls with A's ids through B's tools refused as REST refuses them`);
  });

  test('bytes a key may not have are refused through the tool with the REST 403 (docs/files.md §Who downloads the bytes)', async () => {
    // The owner reads every parent at FULL and gets the address; a workspace key and another
    // admin, both with every scope, read them at METADATA (or not at all) and are refused.
    const t = ctx();
    const other = await createUser(operatorCtx(t.deps.db.kysely, a.workspaceId), { email: `other-${a.tag.toLowerCase()}@canary.test`, role: 'admin' });
    const refusedTo = { workspace: await keyFor(t, a.workspaceId, null, [...PUBLIC_SCOPES]), admin: await keyFor(t, a.workspaceId, other.id, null) };
    const owner = await client(a.secret);
    let refused = 0;
    for (const op of ops.filter((o) => o.operationId in CONTENT_BYTES)) {
      for (const { kind, req } of contentRequests(op, a)) {
        const own = await viaTool(owner, op, req);
        assert.equal(own.isError, false, `${op.operationId} ${kind} for the owner: ${own.text}`);
        assert.ok(typeof JSON.parse(own.text).url === 'string', `${op.operationId} ${kind}: no address for the owner`);
        for (const [who, secret] of Object.entries(refusedTo)) {
          const c = await client(secret);
          const counts = await tableCounts(t);
          const tool = await viaTool(c, op, req);
          const rest = await sendHappy(t, secret, req);
          assert.equal(rest.statusCode, 403, `${op.operationId} ${kind} for a ${who} key: ${rest.body}`);
          assert.equal(tool.isError, true, `${op.operationId} ${kind} for a ${who} key`);
          assert.equal(strip(tool.text), strip(rest.body), `${op.operationId} ${kind} for a ${who} key`);
          assert.equal(JSON.parse(tool.text).error.code, 'full_access_required');
          assert.deepEqual(await tableCounts(t), counts, `${op.operationId} ${kind} for a ${who} key: rows changed`);
          refused++;
        }
      }
    }
    console.log(`# mcp matrix [${t.dialect}]: ${refused} downloads of METADATA-only bytes refused through the tool as over REST`);
  });

  test('a key missing a required scope is refused through the tool with the REST 403', async () => {
    const t = ctx();
    let refused = 0;
    for (const op of ops) {
      const required = OBJECT_SCOPES[op.operationId] ?? SCOPE_TABLE[op.operationId] ?? [];
      const missing = required[0];
      if (!missing) continue;
      const c = await client(
        await keyFor(
          t,
          a.workspaceId,
          a.userId,
          PUBLIC_SCOPES.filter((s: Scope) => s !== missing),
        ),
      );
      const tool = await viaTool(c, op, happyRequest(op, a), `mcp-scope-${op.operationId}`);
      assert.equal(tool.isError, true, op.operationId);
      assert.equal(JSON.parse(tool.text).error.code, 'insufficient_scope', op.operationId);
      refused++;
    }
    console.log(`# mcp matrix [${t.dialect}]: ${refused} tool calls without a required scope refused with insufficient_scope`);
  });
});
