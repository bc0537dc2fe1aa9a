// What the website provider reads from a home page (docs/enrichment.md §The website provider),
// parsed by htmlparser2's tokenizer, never by regular expressions over the markup: the title, the
// description, the links to the company's social profiles and its logo. Relative addresses are
// resolved against the page's own address (or its <base href>).
import { Parser } from 'htmlparser2';
import type { HandleService } from '../definitions/catalogue.ts';
import { profileUrl } from '../records/social.ts';

export type SocialService = 'linkedIn' | 'twitter' | 'facebook' | 'instagram';

export interface PageFacts {
  title: string | null;
  description: string | null;
  logo: string | null;
  social: Partial<Record<SocialService, string>>;
}

const SOCIAL_HOSTS: Record<SocialService, readonly string[]> = {
  linkedIn: ['linkedin.com'],
  twitter: ['twitter.com', 'x.com'],
  facebook: ['facebook.com', 'fb.com'],
  instagram: ['instagram.com'],
};

/** The handle service of each SOCIAL_HANDLE field the page's profiles fill. */
const SERVICE_OF: Record<SocialService, HandleService> = { linkedIn: 'LINKEDIN', twitter: 'TWITTER', facebook: 'FACEBOOK', instagram: 'INSTAGRAM' };

// Paths on those hosts that are never a profile, though shaped as one: share buttons, login pages,
// the site's own pages.
const NOT_PROFILE = /^\/(?:share|sharer|intent|home|login|signup|dialog|plugins|policies|legal|about|help|tr)(?:[/.?]|$)/i;

/**
 * The service and profile URL a link is, or null. A profile is what the service's field takes as
 * one (src/records/social.ts: LinkedIn's `/in/` and `/company/`, Facebook's `profile.php?id=`, …),
 * so that a share button or a login page (`/shareArticle`, `/accounts/login`) is no profile and
 * the first link that is one still counts (docs/enrichment.md §What a run fills).
 */
function socialOf(href: URL): { service: SocialService; url: string } | null {
  if (href.protocol !== 'https:' && href.protocol !== 'http:') return null;
  const host = href.hostname.toLowerCase();
  if (href.pathname.length <= 1 || NOT_PROFILE.test(href.pathname)) return null;
  for (const [service, hosts] of Object.entries(SOCIAL_HOSTS) as [SocialService, readonly string[]][])
    if (hosts.some((h) => host === h || host.endsWith(`.${h}`))) {
      const url = profileUrl(href.href, SERVICE_OF[service]);
      return url === null ? null : { service, url };
    }
  return null;
}

/**
 * The charset a page declares in its own `<meta charset>` or `<meta http-equiv="Content-Type">`,
 * read from its first 1024 bytes as the HTML standard's prescan does (the markup is ASCII in every
 * charset a page may declare); undefined when it declares none. A declared UTF-16 is UTF-8, as the
 * standard has it: a declaration read as ASCII cannot stand in UTF-16. A byte order mark is read
 * before this, by safeFetch (src/enrichment/fetch.ts).
 */
export function declaredCharset(bytes: Uint8Array): string | undefined {
  let found: string | undefined;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (found !== undefined || name !== 'meta') return;
        if (attrs.charset?.trim()) found = attrs.charset.trim();
        else if (attrs['http-equiv']?.trim().toLowerCase() === 'content-type') found = charsetIn(attrs.content ?? '');
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(Buffer.from(bytes.subarray(0, 1024)).toString('latin1'));
  parser.end();
  return found !== undefined && /^utf-16/i.test(found) ? 'utf-8' : found;
}

const charsetIn = (content: string) => /charset\s*=\s*["']?([^"';\s]+)/i.exec(content)?.[1];

const clean = (s: string) => s.replace(/\s+/g, ' ').trim();

export function readPage(html: string, pageUrl: URL): PageFacts {
  let base = pageUrl;
  let title: string | null = null;
  let inTitle = false;
  let titleText = '';
  const meta = new Map<string, string>();
  const icons = new Map<string, string>();
  const social: Partial<Record<SocialService, string>> = {};
  const resolve = (href: string | undefined): URL | null => {
    if (!href) return null;
    try {
      return new URL(href.trim(), base);
    } catch {
      return null;
    }
  };

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'title' && title === null) {
          inTitle = true;
          titleText = '';
        } else if (name === 'base') {
          const b = resolve(attrs.href);
          if (b) base = b;
        } else if (name === 'meta') {
          const key = (attrs.property ?? attrs.name ?? attrs.itemprop ?? '').toLowerCase();
          // An empty tag says nothing: the next source in order (og:description, an icon) counts.
          const content = attrs.content?.trim();
          if (key && content && !meta.has(key)) meta.set(key, content);
        } else if (name === 'link') {
          const rels = (attrs.rel ?? '').toLowerCase().split(/\s+/);
          const href = attrs.href?.trim();
          for (const rel of ['apple-touch-icon', 'icon', 'logo']) if (rels.includes(rel) && href && !icons.has(rel)) icons.set(rel, href);
        } else if (name === 'a') {
          const href = resolve(attrs.href);
          const profile = href && socialOf(href);
          if (profile && !social[profile.service]) social[profile.service] = profile.url;
        }
      },
      ontext(text) {
        if (inTitle) titleText += text;
      },
      onclosetag(name) {
        if (name === 'title' && inTitle) {
          inTitle = false;
          title = clean(titleText) || null;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();

  const description = meta.get('description') ?? meta.get('og:description') ?? null;
  const logoHref = meta.get('og:logo') ?? icons.get('logo') ?? icons.get('apple-touch-icon') ?? icons.get('icon') ?? meta.get('og:image');
  const logo = resolve(logoHref);
  return {
    title: title ?? (meta.get('og:title') ? clean(meta.get('og:title') as string) : null),
    description: description === null ? null : clean(description) || null,
    logo: logo && (logo.protocol === 'https:' || logo.protocol === 'http:') ? logo.href : null,
    social,
  };
}
