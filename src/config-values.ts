// The readers of one environment variable each: a value that is not of its kind stops the process
// with a ConfigError naming the variable and what it expects (docs/config.md). src/config.ts
// composes them into the configuration.
import { ConfigError } from './lib/errors.ts';

export type Env = Record<string, string | undefined>;

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`, name);
  }
  return Number(raw);
}

/**
 * A URL as a refusal quotes it: its credentials (`user:***@`) and the values of query parameters
 * that name a password, secret, token or key masked. The text is read as written, not parsed, so
 * that a value too broken to parse is masked all the same: a refusal reaches stderr and container
 * logs, where a DATABASE_URL's or SMTP_URL's password never belongs (docs/config.md).
 */
function maskedUrl(raw: string): string {
  return raw
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)(.*)@/is, (_, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return `${scheme}${colon < 0 ? '***' : `${userinfo.slice(0, colon)}:***`}@`;
    })
    .replace(/([?&;][^=&#]*(?:pass|secret|token|key)[^=&#]*=)[^&#]*/gi, '$1***');
}

export function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (got "${maskedUrl(raw)}")`, name);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must be a URL starting with ${protocols.map((p) => p + '//').join(' or ')} (got "${maskedUrl(raw)}")`, name);
  }
  // A client takes no host for localhost, unnamed in its refusals; ?host= is libpq's Unix socket.
  if (!parsed.hostname && !parsed.searchParams.get('host')) throw new ConfigError(`${name} names no host (got "${maskedUrl(raw)}")`, name);
  return raw.replace(/\/+$/, '');
}

/**
 * A URL that paths are added to (PUBLIC_BASE_URL, PUBLIC_APP_URL: `{it}/uploads/…`), without its
 * final slash. A query or a fragment would swallow the path added after it, and credentials would
 * be handed to every client with each address.
 */
export function baseUrl(env: Env, name: string): string | undefined {
  const raw = url(env, name, ['http:', 'https:']);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  const what =
    parsed.username || parsed.password ? 'credentials' : parsed.search || raw.includes('?') ? 'a query' : parsed.hash || raw.includes('#') ? 'a fragment' : '';
  if (what) throw new ConfigError(`${name} must be a URL without ${what}, since paths are added to it (got "${maskedUrl(env[name]!)}")`, name);
  return raw;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`, name);
}

export function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^on$/i.test(raw)) return true;
  if (/^(off|0|false|no)$/i.test(raw)) return false;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  throw new ConfigError(`${name} must be on or off (got "${raw}")`, name);
}
