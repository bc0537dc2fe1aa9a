// The Streamable HTTP transport of the stateless endpoint (docs/mcp.md §Sessions): each POST's
// JSON-RPC messages in, their responses out as one JSON answer. It implements the SDK's Transport
// interface for the SDK's server, and answers as the SDK's own stateless JSON transport does (the
// same statuses, checks and JSON-RPC error bodies) without going through a Web Request and
// Response: the body arrives as the bytes Fastify read and the answer leaves as the value to send.
//
// One transport, connected once to one server, answers any number of POSTs, one after the other
// or at once. Each request of a POST reaches the server under an id of the transport's own, never
// the client's, and its response goes back to that POST under the client's id: two POSTs that use
// the same ids never see each other's answers, and a cancellation reaches only a request of its
// own POST, which then stops waiting for that request's response (the server sends none), where
// the SDK's transport would wait for ever. Nothing of a POST is kept once it is answered.
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { MAX_BATCH_SIZE, requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { parseKeepingNumbers } from '../lib/json-numbers.ts';

export interface Answer {
  status: number;
  /** The JSON value to send; undefined for an empty 202. */
  body?: unknown;
}

const refusal = (status: number, code: number, message: string): Answer => ({ status, body: { jsonrpc: '2.0', error: { code, message }, id: null } });

const UTF8 = new TextDecoder();

/**
 * The checks the SDK's transport makes of a POST before it reads its messages, in its order:
 * `Accept` (406), `Content-Type` (415), the body's size (413), the body as JSON (400). `bytes` is
 * the body as received, or the limit in bytes it went over; it is decoded and parsed as the SDK
 * does it, with none of the REST body checks (NUL characters, depth, `__proto__` keys): those
 * belong to the REST call a tool makes, which answers them as a tool error (docs/mcp.md §Tools).
 * The parsed body, or the refusal.
 */
export function received(bytes: Uint8Array | number | undefined, headers: IncomingHttpHeaders): { body: unknown } | { refusal: Answer } {
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    return { refusal: refusal(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream') };
  if (!isJsonContentType(headers['content-type'])) return { refusal: refusal(415, -32000, 'Unsupported Media Type: Content-Type must be application/json') };
  if (typeof bytes === 'number') return { refusal: refusal(413, -32000, requestBodyTooLargeMessage(bytes)) };
  const text = bytes === undefined ? '' : UTF8.decode(bytes);
  try {
    // A number a double does not hold as written is kept as its source text (docs/errors.md
    // §Numbers in bodies), so that a tool's REST call carries it as the agent wrote it and refuses
    // it as REST does, where a parsed Infinity would go on as `null` and a long integer as another.
    return { body: parseKeepingNumbers(text) };
  } catch (err) {
    // The reviver recurses: JSON nested thousands of levels deep overflows it where JSON.parse
    // alone does not. Such a body goes on cut, and its REST call refuses it for its depth
    // (src/mcp/endpoint.ts), so nothing of it is written, whatever its numbers.
    if (err instanceof RangeError)
      try {
        return { body: JSON.parse(text) as unknown };
      } catch {
        // Not JSON either: refused below.
      }
    return { refusal: refusal(400, -32700, 'Parse error: Invalid JSON') };
  }
}

/** Whether a message holds a method (a request or notification); a response holds none. */
const hasMethod = (m: JSONRPCMessage): m is JSONRPCMessage & { method: string } => 'method' in m;
const isRequest = (m: JSONRPCMessage) => hasMethod(m) && 'id' in m;
const isInitialize = (m: JSONRPCMessage) => hasMethod(m) && m.method === 'initialize' && isInitializeRequest(m);

/** Whether two requests of `messages` have the same id (1 and "1" are two ids, as in JSON). */
function sharesId(messages: readonly JSONRPCMessage[]): boolean {
  const ids = new Set<RequestId>();
  for (const m of messages) {
    if (!isRequest(m)) continue;
    const { id } = m as { id: RequestId };
    if (ids.has(id)) return true;
    ids.add(id);
  }
  return false;
}

/** One POST under way: the client's request ids, in order, with their responses once sent. */
interface Exchange {
  responses: Map<RequestId, JSONRPCMessage | undefined>;
  settle: () => void;
}

/** Settles `exchange` once every request it still waits for is answered. */
function settleIfAnswered(exchange: Exchange): void {
  for (const m of exchange.responses.values()) if (m === undefined) return;
  exchange.settle();
}

export class EndpointTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: Transport['onmessage'];
  // The requests the server is answering, by the id it knows them under.
  readonly #pending = new Map<number, { exchange: Exchange; id: RequestId }>();
  #next = 0;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.#pending.clear();
    this.onclose?.();
  }

  /** A response goes to the POST of its request, under the client's id; anything else the server sends has no stream to go to. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (hasMethod(message)) return;
    const id = (message as { id?: RequestId }).id;
    const to = typeof id === 'number' ? this.#pending.get(id) : undefined;
    if (!to) return;
    this.#pending.delete(id as number);
    const { exchange } = to;
    if (!exchange.responses.has(to.id) || exchange.responses.get(to.id) !== undefined) return;
    exchange.responses.set(to.id, { ...message, id: to.id });
    settleIfAnswered(exchange);
  }

  /**
   * A request of `exchange` cancelled by a notification of the same POST: the server sends no
   * response for it (the protocol's rule for a cancelled request), so the POST stops waiting for
   * one. A request already answered keeps its answer.
   */
  #cancelled(exchange: Exchange, own: number): void {
    const to = this.#pending.get(own);
    if (!to || exchange.responses.get(to.id) !== undefined) return;
    this.#pending.delete(own);
    exchange.responses.delete(to.id);
  }

  /** Answers one POST: `body` as `received` parsed it, `headers` as received. */
  async answer(body: unknown, headers: IncomingHttpHeaders, authInfo: AuthInfo): Promise<Answer> {
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) return refusal(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(body) ? body : [body]).map((m) => plainRequest(m) ?? JSONRPCMessageSchema.parse(m));
    } catch {
      return refusal(400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    const initializing = messages.some(isInitialize);
    if (initializing && messages.length > 1) return refusal(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    const version = headers['mcp-protocol-version'];
    if (!initializing && typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      return refusal(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    // Beyond the SDK's checks: each answer goes back under its request's id, so two requests
    // that share one could not both be answered (docs/mcp.md §Sessions).
    if (messages.length > 1 && sharesId(messages)) return refusal(400, -32600, 'Invalid Request: Each request of a batch must have an id of its own');
    const extra = { authInfo, requestInfo: { headers } };
    const exchange: Exchange = { responses: new Map(), settle: () => {} };
    const done = new Promise<void>((resolve) => (exchange.settle = resolve));
    // The ids the server knows this POST's requests under, by the client's id.
    const ours = new Map<RequestId, number>();
    const inbound: JSONRPCMessage[] = [];
    for (const m of messages) {
      if (isRequest(m)) {
        const id = (m as { id: RequestId }).id;
        const own = ++this.#next;
        ours.set(id, own);
        exchange.responses.set(id, undefined);
        this.#pending.set(own, { exchange, id });
        inbound.push({ ...m, id: own });
      } else if (hasMethod(m)) inbound.push(m);
      // A response from the client answers nothing: this server sends no requests.
    }
    // The requests handed to the server so far: a cancellation reaches only those, so one sent
    // before its request in a batch cancels nothing.
    const delivered = new Set<number>();
    for (const m of inbound) {
      // Only a notification cancels; a request of that name is answered as any unknown method.
      if (hasMethod(m) && m.method === 'notifications/cancelled' && !isRequest(m)) {
        const cancel = cancellation(m, ours);
        if (!cancel || !delivered.has(cancel.own)) continue;
        this.onmessage?.(cancel.message, extra);
        this.#cancelled(exchange, cancel.own);
      } else {
        if (isRequest(m)) delivered.add((m as { id: number }).id);
        this.onmessage?.(m, extra);
      }
    }
    // Nothing to answer: notifications and responses only, or requests all cancelled.
    if (exchange.responses.size === 0) return { status: 202 };
    settleIfAnswered(exchange);
    await done;
    const responses = [...exchange.responses.values()];
    return { status: 200, body: responses.length === 1 ? responses[0] : responses };
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The commonest message, a request whose params carry no `_meta`, checked by hand: what
 * JSONRPCMessageSchema.parse returns for it (test/api/mcp-transport.test.ts holds them equal),
 * without the schema's walk through every kind of message. Undefined for any other message, which
 * the schema then parses.
 */
export function plainRequest(m: unknown): JSONRPCMessage | undefined {
  if (!isRecord(m) || m.jsonrpc !== '2.0' || typeof m.method !== 'string') return undefined;
  const { id, params } = m;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  for (const key in m) if (!REQUEST_KEYS.has(key)) return undefined;
  if (params === undefined) return Object.hasOwn(m, 'params') ? undefined : { jsonrpc: '2.0', id: id as RequestId, method: m.method };
  if (!isRecord(params) || Object.hasOwn(params, '_meta')) return undefined;
  return { jsonrpc: '2.0', id: id as RequestId, method: m.method, params: { ...params } };
}

/** A cancellation of a request of the same POST, under the server's id for it (`own`); undefined for any other. */
function cancellation(m: JSONRPCMessage, ours: ReadonlyMap<RequestId, number>): { message: JSONRPCMessage; own: number } | undefined {
  const params = (m as { params?: { requestId?: RequestId } }).params;
  const own = params?.requestId === undefined ? undefined : ours.get(params.requestId);
  return own === undefined ? undefined : { message: { ...m, params: { ...params, requestId: own } } as JSONRPCMessage, own };
}
