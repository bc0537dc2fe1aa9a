// Web origins (RFC 6454) as the MCP endpoint compares them (docs/mcp.md §Origins): a scheme, a
// host and a port, in the one spelling a browser sends in `Origin` (lowercase scheme and host, no
// default port, no trailing slash). Both the configured allow-list and each request's header go
// through `webOrigin`, so two spellings of one origin always compare equal.

/**
 * The serialized origin of `text` when it names an http or https origin and nothing more (no
 * user, path, query or fragment); undefined for anything else, `null` and other opaque origins
 * included.
 */
export function webOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // A URL's path is at least `/`: `http://a.test/` and `http://a.test` name one origin.
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
  return url.origin;
}
