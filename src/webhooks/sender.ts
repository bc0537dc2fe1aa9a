// One signed POST to a webhook endpoint (docs/events.md §Delivery), per the Standard Webhooks
// specification: the `standardwebhooks` package signs `webhook-id.webhook-timestamp.body` with the
// endpoint's `whsec_` secret. Unless WEBHOOK_ALLOW_PRIVATE is set, a target must resolve only to
// public addresses; the check runs on the addresses the connection is made to (the request's own
// DNS lookup), so a name that resolves elsewhere between a check and the connection gains nothing.
// Redirects are not followed.
import { lookup as dnsLookup } from 'node:dns';
import type { Agent } from 'node:http';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { agentFor, httpRequest, httpsRequest } from '../lib/outbound-http.ts';
import { isSpecialAddress, publicLookup } from '../lib/public-address.ts';

export class TargetError extends Error {
  override name = 'TargetError';
}

/** An http(s) URL without credentials; its host, when an address, must be public unless allowed. */
export function checkUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetError(`"${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetError('the URL must start with http:// or https://');
  if (url.username || url.password) throw new TargetError('the URL must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (host === 'localhost' || (isIP(host) !== 0 && isSpecialAddress(host))))
    throw new TargetError(`${host} is a private or loopback address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`);
  return url;
}

// Connections are made only to addresses this lookup passed.
const publicOnly = publicLookup(
  (hostname, address) => new TargetError(`${hostname} resolves to ${address}, a private address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`),
);

export interface Attempt {
  ok: boolean;
  /** The HTTP status, when an answer came. */
  status?: number;
  /** Why it failed: `HTTP <status>` (a redirect's with its target), `TIMEOUT`, `PRIVATE_TARGET`, a network error code. */
  error?: string;
}

/** The three Standard Webhooks headers of one delivery. */
export function signatureHeaders(secret: string, eventId: string, body: string, at: Date): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(eventId, at, body),
  };
}

/**
 * POSTs `body` (the event, JSON) signed with `secret`; any 2xx is success. The whole exchange
 * (connection, request, the answer's status and body) is bounded by `timeoutMs`, not only each
 * silence: an endpoint that trickles its answer a byte at a time fails with TIMEOUT all the same
 * (docs/events.md §Delivery). A kept-alive socket found closed is replaced within that time.
 */
export function deliver(input: { url: string; secret: string; eventId: string; body: string; timeoutMs: number; allowPrivate: boolean }): Promise<Attempt> {
  let url: URL;
  try {
    url = checkUrl(input.url, input.allowPrivate);
  } catch (err) {
    return Promise.resolve({ ok: false, error: err instanceof TargetError ? 'PRIVATE_TARGET' : 'BAD_URL' });
  }
  const payload = Buffer.from(input.body);
  const headers = {
    'content-type': 'application/json',
    'content-length': String(payload.length),
    'user-agent': 'Rolodex-Webhooks/1',
    ...signatureHeaders(input.secret, input.eventId, input.body, new Date()),
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  // The agent of the lookup: a kept-alive socket is only ever reused by a request checked alike.
  const lookup = input.allowPrivate ? dnsLookup : publicOnly;
  return new Promise((resolve) => {
    let settled = false;
    let req: ReturnType<typeof send>;
    const done = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(a);
    };
    const attempt = (agent: Agent | false) => {
      let answered = false;
      req = send(url, { method: 'POST', headers, lookup, agent }, (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        res.resume();
        const error = answerError(status, res.headers.location, url);
        res.on('end', () => done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error }));
        res.on('error', () => done({ ok: false, status, error: 'RESPONSE_ERROR' }));
      });
      const current = req;
      current.on('error', (err: NodeJS.ErrnoException) => {
        if (settled || current !== req) return;
        // A kept-alive socket the endpoint closed as this request went out on it (an endpoint that
        // closes idle connections without saying when, docs/events.md §Delivery): the endpoint
        // refused nothing, so the delivery goes again, once, on a connection of its own.
        if (current.reusedSocket && !answered && agent !== false && RESET.has(err.code ?? '')) return attempt(false);
        done({ ok: false, error: err instanceof TargetError ? 'PRIVATE_TARGET' : (err.code ?? 'NETWORK_ERROR') });
      });
      current.end(payload);
    };
    const deadline = setTimeout(() => {
      done({ ok: false, error: 'TIMEOUT' });
      req.destroy();
    }, input.timeoutMs);
    attempt(agentFor(url.protocol, lookup));
  });
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * The error of a refusing answer: `HTTP <status>`, and for a redirect where it points, resolved
 * against the URL called (docs/events.md §Webhooks: redirects are not followed), so that `webhook
 * test` and `webhook list` show the operator the address to subscribe instead. The target is the
 * parsed URL's `href`, at most 300 characters: the endpoint's bytes are never printed as sent.
 */
function answerError(status: number, location: string | undefined, url: URL): string {
  if (!REDIRECTS.has(status)) return `HTTP ${status}`;
  let target = '';
  try {
    if (location) target = ` to ${new URL(location, url).href.slice(0, 300)}`;
  } catch {
    // Not a URL: the status alone.
  }
  return `HTTP ${status}${target} (redirects are not followed)`;
}

/** What a request meets on a kept-alive socket its endpoint has closed meanwhile. */
const RESET: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE']);
