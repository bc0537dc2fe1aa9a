// node:http and node:https for outbound requests (webhook deliveries, enrichment fetches), taken
// as CommonJS exports rather than imported. An ES import of a built-in module reads every one of
// its exports, and node:http's WebSocket, CloseEvent and MessageEvent are getters that load the
// fetch implementation Node bundles (undici, with the web streams), resident for the life of a
// process that never uses it (docs/performance.md §Loading only what is configured).
import type { Agent } from 'node:http';
import type { LookupFunction } from 'node:net';

const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

export const httpRequest = http.request;
export const httpsRequest = https.request;

// A kept-alive socket is reused without a new DNS lookup, so a pool shared by requests that check
// their addresses differently lets one request ride a connection another was allowed to open: a
// webhook delivery allowed to reach the private network (WEBHOOK_ALLOW_PRIVATE) would lend its
// socket to an enrichment fetch of the same host that must not (docs/events.md §Webhooks). Each
// lookup therefore has agents of its own, whose every socket that lookup connected.
const agents = new Map<LookupFunction, { 'http:': Agent; 'https:': Agent }>();

/** The keep-alive agent for `protocol` whose sockets were all connected through `lookup`. */
export function agentFor(protocol: string, lookup: LookupFunction): Agent {
  let pair = agents.get(lookup);
  if (!pair) {
    // As Node's global agents, besides the lookup: keep-alive, the most recent socket first, 5 s idle.
    const options = { keepAlive: true, scheduling: 'lifo' as const, timeout: 5000, lookup };
    pair = { 'http:': new http.Agent(options), 'https:': new https.Agent(options) };
    agents.set(lookup, pair);
  }
  return protocol === 'https:' ? pair['https:'] : pair['http:'];
}
