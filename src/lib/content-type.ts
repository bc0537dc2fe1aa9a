// The charset parameter of a Content-Type, read alike where the server reads a request body
// (src/http/body.ts) and where enrichment reads a fetched page (src/enrichment/fetch.ts).

/** The charset a Content-Type names, unquoted (`text/html; charset="Shift_JIS"`); undefined when it names none. */
export function charsetOf(contentType: string | undefined): string | undefined {
  return /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType ?? '')?.[2];
}
