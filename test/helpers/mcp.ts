// JSON-RPC POSTs to /mcp as an MCP client sends them once connected (docs/mcp.md): the key, both
// answers accepted, a JSON body and the protocol version, to a listening app or through
// app.inject. The SDK's own client is for exchanges it can make; these are for the messages and
// headers it never sends.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './app.ts';

export type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };

/** The headers of a client's POST with `secret` (none without one); a header of `extra` given as undefined is left out. */
export function mcpHeaders(secret: string | undefined, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const all: Record<string, string | undefined> = {
    ...(secret === undefined ? {} : { authorization: `Bearer ${secret}` }),
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2025-06-18',
    ...extra,
  };
  return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
}

/**
 * POSTs `body` to the listening app's /mcp: a string as it is written (JSON-RPC text, or text that
 * is no JSON), any other value as its JSON.
 */
export function postMcp(
  t: TestApp,
  secret: string | undefined,
  body: unknown,
  init: { headers?: Record<string, string | undefined>; signal?: AbortSignal } = {},
): Promise<Response> {
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: mcpHeaders(secret, init.headers),
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

/** The JSON answer to `body` POSTed with `secret`, which is 200 (`what` names the POST if not). */
export async function rpc<T = any>(t: TestApp, secret: string, body: unknown, what = 'POST /mcp'): Promise<T> {
  const res = await postMcp(t, secret, body);
  assert.equal(res.status, 200, `${what}: ${res.status}`);
  return (await res.json()) as T;
}

/** A tools/call message; without `args`, no `arguments`. */
export const toolCall = (id: number, name: string, args?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...(args === undefined ? {} : { arguments: args }) },
});

/** A tools/call's answer as whether it is a tool error and its text parsed as JSON. */
export function toolOutcome(answer: { result: ToolResult }): { isError: boolean; body: any } {
  return { isError: answer.result.isError === true, body: JSON.parse(answer.result.content[0]!.text) };
}

/** Calls tool `name` with `args` in one POST: whether it is a tool error, and its text parsed as JSON. */
export async function callTool(t: TestApp, secret: string, name: string, args: unknown): Promise<{ isError: boolean; body: any }> {
  return toolOutcome(await rpc(t, secret, toolCall(1, name, args), name));
}
