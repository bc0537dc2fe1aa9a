// One signed POST to a webhook endpoint (docs/events.md §Delivery), per the Standard Webhooks
// specification: the `standardwebhooks` package signs `webhook-id.webhook-timestamp.body` with the
// endpoint's `whsec_` secret. Unless WEBHOOK_ALLOW_PRIVATE is set, a target must resolve only to
// public addresses; the check runs on the addresses the connection is made to (the request's own
// DNS lookup), so a name that resolves elsewhere between a check and the connection gains nothing.
// Redirects are not followed.
import { lookup as dnsLookup } from 'node:dns';
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
  /** Why it failed: `HTTP <status>`, `TIMEOUT`, `PRIVATE_TARGET`, a network error code. */
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
 * (docs/events.md §Delivery).
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
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(a);
    };
    // The agent of the lookup: a kept-alive socket is only ever reused by a request checked alike.
    const lookup = input.allowPrivate ? dnsLookup : publicOnly;
    const req = send(url, { method: 'POST', headers, lookup, agent: agentFor(url.protocol, lookup) }, (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` }));
      res.on('error', () => done({ ok: false, status, error: 'RESPONSE_ERROR' }));
    });
    const deadline = setTimeout(() => {
      done({ ok: false, error: 'TIMEOUT' });
      req.destroy();
    }, input.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => done({ ok: false, error: err instanceof TargetError ? 'PRIVATE_TARGET' : (err.code ?? 'NETWORK_ERROR') }));
    req.end(payload);
  });
}
