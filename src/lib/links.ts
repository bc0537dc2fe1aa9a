import type { Config } from '../config.ts';

/** `{PUBLIC_APP_URL}/<kind>/<id>` when an app URL is configured, else null (decisions §3). */
export function httpLink(config: Config, kind: string, id: string): string | null {
  return config.publicAppUrl ? `${config.publicAppUrl}/${kind}/${encodeURIComponent(id)}` : null;
}
