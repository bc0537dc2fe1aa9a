// The errors of the service. AppError is the one error an API response is made from: every code is
// declared in ERROR_CODES with its status, so a code cannot be thrown without being catalogued
// (test/ops/errors-catalogue.test.ts checks that each one is documented in docs/errors.md). InputError
// is the one base of every other error about bad input (CLI arguments, import lines, values).

export const ERROR_CODES = {
  // 400
  version_header: 400,
  invalid_json: 400,
  unknown_field: 400,
  invalid_type: 400,
  parameter_missing: 400,
  invalid_value: 400,
  invalid_parameter: 400,
  invalid_idempotency_key: 400,
  idempotency_key_too_long: 400,
  // 400, lists
  unknown_relationship: 400,
  relationship_entity_missing: 400,
  relationship_entity_inactive: 400,
  conflicting_membership_change: 400,
  // 400, 403: records (docs/records.md) and meetings (docs/meetings.md)
  read_only_field: 400,
  read_only_relationship: 400,
  full_access_required: 403,
  // 401
  missing_api_key: 401,
  invalid_api_key: 401,
  // 403
  insufficient_scope: 403,
  // 404
  route_not_found: 404,
  resource_not_found: 404,
  // 409
  idempotency_conflict: 409,
  duplicate_value: 409,
  // 413
  payload_too_large: 413,
  // 415
  unsupported_media_type: 415,
  // 422
  idempotency_key_reused: 422,
  // 429
  rate_limited: 429,
  // files (docs/design.md §Files)
  mime_type_not_allowed: 400,
  file_too_large: 400,
  user_required: 403,
  admin_required: 403,
  invalid_upload_token: 403,
  invalid_download_token: 403,
  invalid_file_state: 409,
  upload_incomplete: 409,
  file_busy: 409,
  upload_too_large: 413,
  checksum_mismatch: 422,
  precondition_failed: 412,
  range_not_satisfiable: 416,
  // emails (docs/emails.md)
  unknown_mailbox: 400,
  referenced_resource_missing: 400,
  // 500, 503
  internal_error: 500,
  service_unavailable: 503,
  // before routing: what Node's HTTP parser refuses (src/http/client-error.ts)
  malformed_request: 400,
  expectation_failed: 417,
  headers_too_large: 431,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

type CodeWithStatus<S extends number> = { [C in ErrorCode]: (typeof ERROR_CODES)[C] extends S ? C : never }[ErrorCode];

/**
 * Whether the very same request, sent again, can succeed: decided here for every code of a status
 * that generated clients retry by default (409, 429, 5xx), and the type makes each new such code
 * decide. A code marked false answers with `x-should-retry: false`, so that clients do not repeat
 * a request whose outcome cannot change (docs/errors.md §Retrying).
 */
export const RETRYABLE: Record<CodeWithStatus<408 | 409 | 429 | 500 | 502 | 503 | 504>, boolean> = {
  idempotency_conflict: true,
  duplicate_value: false,
  file_busy: true,
  invalid_file_state: false,
  upload_incomplete: false,
  rate_limited: true,
  internal_error: true,
  service_unavailable: true,
};

const NOT_RETRYABLE = new Set(Object.entries(RETRYABLE).flatMap(([code, retry]) => (retry ? [] : [code])));

export const ERROR_TYPES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
  417: 'expectation_failed',
  422: 'unprocessable_content',
  429: 'too_many_requests',
  431: 'request_header_fields_too_large',
  500: 'internal_server_error',
  503: 'service_unavailable',
};

export interface ErrorBody {
  error: { type: string; code: string; message: string; param?: string; requestId: string };
}

export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | undefined;
  /** Extra response headers, such as Retry-After. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { param?: string; headers?: Record<string, string> } = {}) {
    super(message);
    this.code = code;
    this.status = ERROR_CODES[code];
    this.param = opts.param;
    this.headers = NOT_RETRYABLE.has(code) ? { ...opts.headers, 'x-should-retry': 'false' } : (opts.headers ?? {});
  }

  body(requestId: string): ErrorBody {
    return {
      error: {
        type: ERROR_TYPES[this.status] ?? 'error',
        code: this.code,
        message: this.message,
        ...(this.param !== undefined ? { param: this.param } : {}),
        requestId,
      },
    };
  }
}

/**
 * Bad input, with `param`: the path of the offending input relative to what the check was given
 * (`email`, `fields.$name.value`, `members[2]`, or a suffix such as `.country` or `[2]` for a check
 * of one value). Checks shared by the CLI, the import and services throw it; a caller places the
 * path in its own frame (the import adds the line, a nested check prefixes its field), and nothing
 * ever finds the param by reading the message.
 */
export class InputError extends Error {
  override name = 'InputError';
  readonly param: string | undefined;

  constructor(message: string, param?: string) {
    super(message);
    this.param = param;
  }
}

/** A configuration value that stops the process: its message names the variable and what it expects. */
export class ConfigError extends InputError {
  override name = 'ConfigError';
}

/** 404 for an id that names nothing the caller may see; `param` is the path parameter that carried it. */
export function notFound(kind: string, id: string, param = 'id'): AppError {
  return new AppError('resource_not_found', `No ${kind} with id "${id}" exists.`, { param });
}

/**
 * An error as a log keeps it: its code and message, never its stack (docs/reliability.md
 * §Operational faults in the log). The code is the error's own; without one, with `named`, its
 * name (the S3 client's errors carry their code there: `NoSuchBucket`, `AccessDenied`), else the
 * code of the error it wraps (`cause`).
 */
export function causeOf(err: unknown, opts: { named?: boolean } = {}): { code?: string; reason: string } {
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: { code?: unknown } } | null | undefined;
  const code =
    typeof e?.code === 'string'
      ? e.code
      : opts.named === true && typeof e?.name === 'string'
        ? e.name
        : typeof e?.cause?.code === 'string'
          ? e.cause.code
          : undefined;
  const reason = typeof e?.message === 'string' ? e.message : String(err);
  return code === undefined ? { reason } : { code, reason };
}
