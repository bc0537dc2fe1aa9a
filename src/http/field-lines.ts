// Headers that name one value and are no list (RFC 9110 §5.3): Authorization (./bearer.ts),
// Idempotency-Key (./idempotency.ts) and the version header (./version.ts). Node keeps the first Authorization line and drops the
// others, and joins the lines of a header it does not know with ", ", while a proxy in front may
// have read any one of them; so two lines of such a header are refused, never read as one value
// (docs/design.md §Requests, §Idempotency).

/**
 * Whether `rawHeaders` (a request's field lines, name then value) hold more than one line of the
 * header `name`, given in lower case. A request made in memory (MCP's tool calls) has no lines:
 * its headers are one value each.
 */
export function severalLines(rawHeaders: readonly string[] | undefined, name: string): boolean {
  if (!rawHeaders) return false;
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const line = rawHeaders[i]!;
    if (line.length !== name.length || line.toLowerCase() !== name) continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}
