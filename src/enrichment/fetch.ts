// The one way an enrichment provider reaches the internet (docs/enrichment.md §The website
// provider): GET over http or https, 5 s per fetch, at most 1 MiB of body, at most 3 redirects,
// an identifying User-Agent, and never a private, loopback, link-local or otherwise special
// address unless allowed. The address is checked where the connection is made, after DNS
// resolution (the socket's own lookup), for every hop of a redirect, so a name that resolves to
// an internal address, or a redirect to one, is refused; an address literal is checked as is.
import { lookup as dnsLookup } from 'node:dns';
import type { IncomingMessage } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { charsetOf } from '../lib/content-type.ts';
import { unrooted } from '../lib/email.ts';
import { agentFor, httpRequest, httpsRequest } from '../lib/outbound-http.ts';
import { isSpecialAddress, publicLookup } from '../lib/public-address.ts';

export const FETCH_LIMITS = { timeoutMs: 5000, maxBytes: 1024 * 1024, maxRedirects: 3 };

export interface Fetched {
  status: number;
  /** The address the body came from, after redirects. */
  url: URL;
  contentType: string;
  /**
   * The body as text, in the charset its byte order mark names, else the one the Content-Type
   * names (UTF-8 when neither names one).
   */
  body: string;
  /** The charset `body` was read in when the byte order mark or the Content-Type named one. */
  charset: string | undefined;
  /** The body as received, up to maxBytes. */
  bytes: Buffer;
  /** Whether the body was cut at maxBytes. */
  truncated: boolean;
}

export class FetchRefused extends Error {
  override name = 'FetchRefused';
}

const publicOnly = publicLookup((hostname) => new FetchRefused(`${hostname} resolves to a private or special address`));

/** The socket's lookup: every answer checked unless private targets are allowed. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return allowPrivate ? dnsLookup : publicOnly;
}

function once(url: URL, opts: { userAgent: string; allowPrivate: boolean; signal: AbortSignal }): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !opts.allowPrivate && isSpecialAddress(host)) return Promise.reject(new FetchRefused(`${host} is a private or special address`));
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const lookup = guardedLookup(opts.allowPrivate);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      headers: { 'user-agent': opts.userAgent, accept: 'text/html,text/plain;q=0.9,*/*;q=0.5' },
      lookup,
      // The agent of the lookup: a kept-alive socket is only ever reused by a fetch checked alike.
      agent: agentFor(url.protocol, lookup),
      signal: opts.signal,
    });
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
}

async function readCapped(res: IncomingMessage, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= maxBytes) {
      res.destroy();
      return { bytes: Buffer.concat(chunks), truncated: true };
    }
  }
  return { bytes: Buffer.concat(chunks), truncated: false };
}

/**
 * The charset a byte order mark at the start of `bytes` names, or undefined. A browser reads the
 * bytes in it whatever the Content-Type or the page declares (the HTML standard's BOM sniffing):
 * a UTF-8 file served with a server's default `charset=ISO-8859-1` is still UTF-8.
 */
export function bomCharset(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/**
 * `bytes` as text in `charset` (an encoding label of the WHATWG Encoding standard, as browsers
 * read them: `iso-8859-1` is windows-1252), UTF-8 when none is given or the label names no
 * encoding, so that a page in Shift_JIS or Latin-1 is read as its characters, not as U+FFFD.
 */
export function textOf(bytes: Uint8Array, charset?: string): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder().decode(bytes);
  }
}

/**
 * `url` on its host without a final dot: `acme.test.` is `acme.test` written with the DNS root, one
 * domain (docs/records.md §E-mail addresses), and a fetch asks for the host as it is compared.
 */
export function unrootedUrl(url: URL): URL {
  const host = unrooted(url.hostname);
  if (host === url.hostname) return url;
  const out = new URL(url);
  out.hostname = host;
  return out;
}

export interface FetchOptions {
  userAgent: string;
  allowPrivate: boolean;
  signal?: AbortSignal;
  /**
   * Asked before a redirect is followed to `next`: false answers the redirect itself (its status,
   * no body), as the website provider does a redirect robots.txt disallows.
   */
  mayFollow?: (next: URL) => Promise<boolean>;
}

/**
 * GETs `start`, following up to maxRedirects redirects (those `mayFollow` allows), within the
 * limits above; each hop on its host without a final dot (unrootedUrl).
 */
export async function safeFetch(start: URL, opts: FetchOptions): Promise<Fetched> {
  const timeout = AbortSignal.timeout(FETCH_LIMITS.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  let url = unrootedUrl(start);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchRefused(`${url.protocol} is not http or https`);
    if (url.username || url.password) throw new FetchRefused('an address with credentials is refused');
    const res = await once(url, { userAgent: opts.userAgent, allowPrivate: opts.allowPrivate, signal });
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && location) {
      res.resume();
      if (hop >= FETCH_LIMITS.maxRedirects) throw new FetchRefused(`more than ${FETCH_LIMITS.maxRedirects} redirects`);
      const next = unrootedUrl(new URL(location, url));
      if (opts.mayFollow && !(await opts.mayFollow(next)))
        return { status, url, contentType: '', body: '', charset: undefined, bytes: Buffer.alloc(0), truncated: false };
      url = next;
      continue;
    }
    const { bytes, truncated } = await readCapped(res, FETCH_LIMITS.maxBytes);
    const contentType = String(res.headers['content-type'] ?? '');
    const charset = bomCharset(bytes) ?? charsetOf(contentType);
    return { status, url, contentType, body: textOf(bytes, charset), charset, bytes, truncated };
  }
}
