// SOCIAL_HANDLE values (docs/records.md §Social handles): a profile URL on the field's service or
// a bare handle (`@ann` or `ann`), stored and answered as the service's profile URL. A field
// without a service keeps what was written (one word of 1 to 255 characters).
import type { HandleService } from '../definitions/catalogue.ts';
import { InputError } from '../lib/errors.ts';
import { longerThan } from '../lib/chars.ts';

interface Service {
  /** Host names of the service; any subdomain of one counts (www., mobile., regional ones). */
  hosts: readonly string[];
  /** What a handle may hold. */
  handle: RegExp;
  /**
   * Profile paths of a URL (the handle captured), first: the one a bare handle takes. LinkedIn's
   * prefixes are matched ignoring case (`/IN/`, `/Company/`, as people type them); the stored URL
   * has the prefix in lower case and the handle as written. A LinkedIn page under a profile (a
   * language `/in/ann/en`, a section `/in/ann/details/experience/`) is that profile.
   */
  paths: readonly { re: RegExp; prefix: string }[];
}

const WORD = /^[\p{L}\p{N}_.%-]{1,100}$/u;
const SERVICES: Record<HandleService, Service> = {
  TWITTER: { hosts: ['x.com', 'twitter.com'], handle: /^\w{1,15}$/, paths: [{ re: /^\/(\w{1,15})\/?$/, prefix: 'https://x.com/' }] },
  LINKEDIN: {
    hosts: ['linkedin.com'],
    handle: WORD,
    paths: [
      { re: /^\/in\/([^/]+)(?:\/.*)?$/i, prefix: 'https://linkedin.com/in/' },
      { re: /^\/company\/([^/]+)(?:\/.*)?$/i, prefix: 'https://linkedin.com/company/' },
    ],
  },
  FACEBOOK: { hosts: ['facebook.com', 'fb.com'], handle: /^[\p{L}\p{N}.]{1,50}$/u, paths: [{ re: /^\/([^/]+)\/?$/, prefix: 'https://facebook.com/' }] },
  INSTAGRAM: { hosts: ['instagram.com'], handle: /^[\w.]{1,30}$/, paths: [{ re: /^\/([\w.]{1,30})\/?$/, prefix: 'https://www.instagram.com/' }] },
};

/**
 * Whether `host` (in lower case) is one of `hosts` or a subdomain of one. A final dot, the DNS root
 * (`linkedin.com.`), names the same host, so it is left out first.
 */
function onHost(host: string, hosts: readonly string[]): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return hosts.some((h) => name === h || name.endsWith(`.${h}`));
}

/** Whether `text` is written as a URL (a scheme, or the service's host first) rather than a handle. */
export function isServiceUrl(text: string, service: HandleService): boolean {
  const t = text.trim();
  return /^https?:\/\//i.test(t) || onHost(t.split(/[/?#]/, 1)[0]!.toLowerCase(), SERVICES[service].hosts);
}

/** The profile URL `text` stands for on `service`, or null when it is neither such a URL nor a handle. */
export function profileUrl(text: string, service: HandleService): string | null {
  const s = SERVICES[service];
  const t = text.trim();
  if (isServiceUrl(t, service)) {
    let u: URL;
    try {
      u = new URL(/^https?:\/\//i.test(t) ? t : `https://${t}`);
    } catch {
      return null;
    }
    if (!onHost(u.hostname.toLowerCase(), s.hosts)) return null;
    // Facebook profiles without a user name are addressed by their numeric id.
    if (service === 'FACEBOOK' && u.pathname === '/profile.php') {
      const id = u.searchParams.get('id');
      return id && /^\d{1,20}$/.test(id) ? `https://facebook.com/profile.php?id=${id}` : null;
    }
    for (const p of s.paths) {
      const m = p.re.exec(u.pathname);
      const handle = m ? decoded(m[1]!) : null;
      if (handle !== null && WORD.test(handle)) return p.prefix + encodeURIComponent(handle);
    }
    return null;
  }
  const handle = decoded(t.startsWith('@') ? t.slice(1) : t);
  return handle !== null && s.handle.test(handle) ? s.paths[0]!.prefix + encodeURIComponent(handle) : null;
}

/** `a LINKEDIN`, `an INSTAGRAM`: the article a service's name takes in messages. */
const withArticle = (service: HandleService) => `${service === 'INSTAGRAM' ? 'an' : 'a'} ${service}`;

/**
 * The handle a URL path segment or a written handle spells, percent escapes decoded; null when an
 * escape is broken. A profile URL holds the handle percent-encoded (`jürgen` as `j%C3%BCrgen`,
 * as the URL parser writes a path and a browser's address bar copies it), so the handle and
 * every URL of it, encoded or not, are stored as one text.
 */
function decoded(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** A SOCIAL_HANDLE value as stored (docs/records.md §Social handles); InputError when it is not one. */
export function normalizeHandle(text: string, service: HandleService | null): string {
  if (text.length < 1 || longerThan(text, 255)) throw new InputError('must be a handle or profile URL of 1 to 255 characters', '');
  if (service === null) {
    if (!/^\S{1,255}$/u.test(text)) throw new InputError('must be a handle of 1 to 255 characters without spaces', '');
    return text;
  }
  const url = profileUrl(text, service);
  if (url === null) throw new InputError(`must be ${withArticle(service)} profile URL (${SERVICES[service].paths[0]!.prefix}…) or a handle`, '');
  return url;
}
