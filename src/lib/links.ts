import type { Config } from '../config.ts';

/** `{PUBLIC_APP_URL}/<kind>/<id>` when an app URL is configured, else null (docs/design.md §Requests). */
export function httpLink(config: Config, kind: string, id: string): string | null {
  return config.publicAppUrl ? `${config.publicAppUrl}/${kind}/${encodeURIComponent(id)}` : null;
}
