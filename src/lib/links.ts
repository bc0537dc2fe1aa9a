// Addresses the API returns, built once per app from the configuration (not per request).

export interface HttpLinks {
  /** `{PUBLIC_APP_URL}/<kind>/<id>` when an app URL is configured, else null (docs/design.md §Requests). */
  http(kind: string, id: string): string | null;
}

export function createHttpLinks(publicAppUrl: string | undefined): HttpLinks {
  return { http: publicAppUrl ? (kind, id) => `${publicAppUrl}/${kind}/${encodeURIComponent(id)}` : () => null };
}
