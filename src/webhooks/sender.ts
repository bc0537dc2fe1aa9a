// One signed POST to a webhook endpoint (docs/events.md §Delivery), per the Standard Webhooks
// specification: the `standardwebhooks` package signs `webhook-id.webhook-timestamp.body` with the
// endpoint's `whsec_` secret. Unless WEBHOOK_ALLOW_PRIVATE is set, a target must resolve only to
// public addresses; the check runs on the addresses the connection is made to (the request's own
// DNS lookup), so a name that resolves elsewhere between a check and the connection gains nothing.
// Redirects are not followed.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/** Whether an address is private, loopback, link-local, multicast or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

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
  if (!allowPrivate && (host === 'localhost' || (isIP(host) !== 0 && isPrivateAddress(host))))
    throw new TargetError(`${host} is a private or loopback address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`);
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that refuses private answers: the connection is made only to addresses it passed. */
function publicLookup(hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(new TargetError(`${hostname} resolves to ${bad.address}, a private address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`), []);
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
}

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

/** POSTs `body` (the event, JSON) signed with `secret`; any 2xx is success. */
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
      resolve(a);
    };
    const req = send(url, { method: 'POST', headers, ...(input.allowPrivate ? {} : { lookup: publicLookup as never }) }, (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` }));
      res.on('error', () => done({ ok: false, status, error: 'RESPONSE_ERROR' }));
    });
    req.setTimeout(input.timeoutMs, () => {
      done({ ok: false, error: 'TIMEOUT' });
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) => done({ ok: false, error: err instanceof TargetError ? 'PRIVATE_TARGET' : (err.code ?? 'NETWORK_ERROR') }));
    req.end(payload);
  });
}
