// Schemas that exist for the OpenAPI document only: the one error shape and the rate-limit headers.
import { Type } from '@sinclair/typebox';
import { RETRYABLE } from '../lib/errors.ts';

export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.String({ description: 'Follows the HTTP status, e.g. `bad_request` for 400.' }),
        code: Type.String({ description: 'Stable, from the catalogue in docs/errors.md: program against it.' }),
        message: Type.String({ description: 'For people; may change.' }),
        param: Type.Optional(Type.String({ description: 'The offending input as a path, e.g. `fields.$name` or `Idempotency-Key`.' })),
        requestId: Type.String({ description: 'Equals the X-Request-Id response header.' }),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'Error', additionalProperties: false, description: 'The one error shape of the service.' },
);

const int = (description: string) => ({ type: 'integer', description });

export const RATE_HEADERS = {
  'X-RateLimit-Limit': int("Requests per second of this operation's category for the workspace (also the burst)."),
  'X-RateLimit-Remaining': int('Requests that may still be made right now.'),
  'X-RateLimit-Reset': int('Unix time (seconds) at which the bucket is full again.'),
};

/** On the success of an idempotent operation (docs/design.md §Idempotency). */
export const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present, `true`, when this is the stored answer of an earlier request with the same Idempotency-Key, replayed byte for byte.',
  },
};

const MESSAGE_FOR: Record<string, string> = {
  rate_limited: 'Too many Read requests for this workspace; retry after 1 s.',
  missing_api_key: 'Send your API key as "Authorization: Bearer <API_KEY>".',
  service_unavailable: 'A dependency of the service is not reachable; retry shortly.',
  version_header: 'The version header is missing: send Service-Version or Lightfield-Version; supported versions: 2026-03-01.',
};

// The Bearer challenges of RFC 6750 §3 (src/http/bearer.ts).
const CHALLENGE: Record<number, string> = {
  401: 'RFC 6750 §3: `Bearer realm="rolodex"`, with `error="invalid_token"` for a key that is unknown, revoked or expired, `error="invalid_request"` for a malformed one, no `error` when none came.',
  403: 'On `insufficient_scope` (RFC 6750 §3): `Bearer realm="rolodex", error="insufficient_scope"`, with `scope`, the scopes the operation needs.',
};

/** An OpenAPI response for one status: the error shape, the codes it may carry, an example. */
export function errorResponse(status: number, type: string, codes: string[]): Record<string, unknown> {
  const headers: Record<string, unknown> = status === 429 ? { ...RATE_HEADERS, 'Retry-After': int('Seconds to wait before retrying.') } : {};
  if (status === 409 && codes.some((c) => c === 'idempotency_conflict' || c === 'file_busy')) headers['Retry-After'] = int('Seconds to wait before retrying.');
  if (status === 503) headers['Retry-After'] = int('Seconds to wait before retrying (1).');
  if (status === 401 || codes.includes('insufficient_scope')) headers['WWW-Authenticate'] = { type: 'string', description: CHALLENGE[status] };
  const final = codes.filter((c) => (RETRYABLE as Record<string, boolean>)[c] === false);
  if (final.length > 0) {
    headers['x-should-retry'] = {
      type: 'string',
      enum: ['false'],
      description: `\`false\` on ${final.map((c) => `\`${c}\``).join(', ')}: the same request sent again cannot succeed, so clients that retry by default should not.`,
    };
  }
  const examples: Record<string, unknown> = {};
  for (const code of codes) {
    examples[code] = {
      value: { error: { type, code, message: MESSAGE_FOR[code] ?? `An example ${code} error.`, requestId: 'req_01jq3v8h3b8x6c9p2w7r5t4m1n' } },
    };
  }
  return {
    description: `${type}: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: 'Error#' }, examples } },
  };
}
