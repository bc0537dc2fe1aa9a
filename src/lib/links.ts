// Addresses the API returns, built once per app from the configuration (not per request).

export interface Links {
  /** `{PUBLIC_APP_URL}/<kind>/<id>` when an app URL is configured, else null (docs/design.md §Requests). */
  http(kind: string, id: string): string | null;
}

export function createLinks(publicAppUrl: string | undefined): Links {
  return { http: publicAppUrl ? (kind, id) => `${publicAppUrl}/${kind}/${encodeURIComponent(id)}` : () => null };
}
