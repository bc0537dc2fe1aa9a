// The website provider (docs/enrichment.md §The website provider): reads an account's home page,
// the first `$website`, after asking its robots.txt, and finds the title, the description, the
// social profile links and the logo. Every fetch goes through safeFetch's limits and address
// checks. It fills accounts only: a contact's `$account` comes from its e-mail domain, which
// needs no fetch (src/enrichment/execute.ts).
import { type FetchOptions, safeFetch, textOf, unrootedUrl } from './fetch.ts';
import type { SocialService } from './html.ts';
import { type EnrichmentProvider, firstValue, type Subject } from './provider.ts';
import { robotsAllow } from './robots.ts';

/** The product token robots.txt groups may name. */
export const ROBOTS_TOKEN = 'RolodexEnrichment';

const SOCIAL_FIELDS: Record<string, SocialService> = { $linkedIn: 'linkedIn', $twitter: 'twitter', $facebook: 'facebook', $instagram: 'instagram' };

/**
 * The account's home page: its first website, https:// assumed when no scheme is given, on its host
 * without a final dot (`https://acme.test./about` is `https://acme.test/`, one domain: docs/records.md
 * §E-mail addresses).
 */
export function homePage(subject: Subject): URL | null {
  const raw = firstValue(subject.fields.$website);
  if (typeof raw !== 'string' || raw.trim() === '') return null;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw.trim()) ? raw.trim() : `https://${raw.trim()}`);
    return url.protocol === 'http:' || url.protocol === 'https:' ? unrootedUrl(new URL('/', url)) : null;
  } catch {
    return null;
  }
}

/**
 * Whether the robots.txt of an address's origin allows the provider to read it, each origin's file
 * read once. RFC 9309: a robots.txt that is unavailable (4xx) allows everything; one that is
 * unreachable (a 5xx, a dropped connection, a timeout) disallows everything, so the run fails
 * before the page is read. An address refused here is refused for the page too.
 */
function robotsOf(opts: FetchOptions): (url: URL) => Promise<boolean> {
  const files = new Map<string, Promise<string | null>>();
  const read = async (origin: URL): Promise<string | null> => {
    const robots = await safeFetch(new URL('/robots.txt', origin), opts).catch((err: unknown) => {
      if (err instanceof Error && err.name === 'FetchRefused') throw err;
      throw new Error('robots.txt could not be reached', { cause: err });
    });
    if (robots.status >= 500) throw new Error('robots.txt answered a server error');
    return robots.status >= 200 && robots.status < 300 ? robots.body : null;
  };
  return async (url) => {
    let file = files.get(url.origin);
    if (!file) files.set(url.origin, (file = read(url)));
    const text = await file;
    return text === null || robotsAllow(text, ROBOTS_TOKEN, url.pathname + url.search);
  };
}

export const websiteProvider: EnrichmentProvider = {
  name: 'website',
  fills: (entityType) => (entityType === 'account' ? ['$name', ...Object.keys(SOCIAL_FIELDS), 'description', 'logo'] : []),
  // The page's description is text and its logo an address: a workspace's fields of those keys
  // are filled only when they take such a value (docs/enrichment.md §What a run fills).
  valueTypes: { description: ['TEXT', 'MARKDOWN'], logo: ['URL'] },
  canLookUp: (subject) => subject.entityType === 'account' && homePage(subject) !== null,
  async lookUp(subject, targets, env) {
    const home = homePage(subject);
    if (!home) return {};
    const opts = { userAgent: env.userAgent, allowPrivate: env.allowPrivate, signal: env.signal };
    // Every address the page is read from is one its host's robots.txt allows: the home page, and
    // each address a redirect names, on its host or another (a redirect it disallows is not followed).
    const allows = robotsOf(opts);
    if (!(await allows(home))) return {};
    const page = await safeFetch(home, { ...opts, mayFollow: allows });
    if (page.status < 200 || page.status >= 300 || !/html/i.test(page.contentType)) return {};
    // The HTML parser loads with the first page read: a process that runs no enrichment never holds it.
    const { declaredCharset, readPage } = await import('./html.ts');
    // The page's charset is its byte order mark's, else the Content-Type's (as safeFetch read it),
    // else the one its own <meta> declares, else UTF-8.
    const html = page.charset !== undefined ? page.body : textOf(page.bytes, declaredCharset(page.bytes));
    const facts = readPage(html, page.url);
    const found: Record<string, unknown> = {};
    for (const key of targets) {
      const service = SOCIAL_FIELDS[key];
      const value = service
        ? facts.social[service]
        : key === '$name'
          ? facts.title
          : key === 'description'
            ? facts.description
            : key === 'logo'
              ? facts.logo
              : undefined;
      if (value) found[key] = value;
    }
    return found;
  },
};
