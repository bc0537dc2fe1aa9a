// What a failure of the S3 client means for the API (docs/reliability.md §Blob store): an object
// that is not there, a store that cannot be reached now (BlobStoreUnavailableError), or a store
// that refuses this deployment's settings (BlobStoreMisconfiguredError). The last two answer 503;
// neither may reach a client as a 409 that blames its upload, nor as a 500.
import { BlobStoreMisconfiguredError, BlobStoreUnavailableError } from './blob-store.ts';

const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

export function errorStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

// The names the SDK gives an error whose answer had no code in it.
const GENERIC = new Set(['Unknown', 'UnknownError', 'Error']);

/** The store's error code (`NoSuchBucket`, `InvalidAccessKeyId`, …); answers to HEAD have none. */
function errorCode(err: unknown): string | undefined {
  const { Code, name } = err as { Code?: unknown; name?: unknown };
  if (typeof Code === 'string') return Code;
  return typeof name === 'string' && !GENERIC.has(name) ? name : undefined;
}

/** The object is not there. A bucket that is not there is no answer about an object. */
export function isNotFound(err: unknown): boolean {
  if (errorCode(err) === 'NoSuchBucket') return false;
  const name = (err as Error).name;
  return name === 'NotFound' || name === 'NoSuchKey' || errorStatus(err) === 404;
}

/** The store could not be reached, did not answer in time, or answered a 5xx. */
function unavailable(err: unknown): boolean {
  const { name, code } = err as { name?: unknown; code?: unknown };
  if (name === 'TimeoutError' || name === 'AbortError') return true;
  if (typeof code === 'string' && UNREACHABLE.has(code)) return true;
  return (errorStatus(err) ?? 0) >= 500;
}

export interface StoreSettings {
  bucket: string;
  region: string;
}

export function missingBucket(settings: StoreSettings, cause?: unknown): BlobStoreMisconfiguredError {
  return new BlobStoreMisconfiguredError(`the bucket "${settings.bucket}" does not exist (S3_BUCKET)`, { cause });
}

/** Which setting a refusal of the store names, or undefined when it names none. */
function misconfiguration(err: unknown, settings: StoreSettings): string | undefined {
  const status = errorStatus(err);
  const code = errorCode(err) ?? `HTTP ${status}`;
  if (errorCode(err) === 'NoSuchBucket') return `the bucket "${settings.bucket}" does not exist (S3_BUCKET)`;
  if ((err as Error).name === 'CredentialsProviderError') {
    return 'no credentials were found (S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or the AWS SDK default chain)';
  }
  if (status === 401 || status === 403) {
    return `the store refused the server's credentials or their permissions on the bucket "${settings.bucket}" (${code}; S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, the key's policy)`;
  }
  if (status === 301 || status === 400) {
    return `the store refused the server's requests for the bucket "${settings.bucket}" in region ${settings.region} (${code}; S3_REGION, S3_ENDPOINT, S3_BUCKET)`;
  }
  return undefined;
}

/**
 * What an unreachable store's failure says: the socket's or the SDK's message, or the status of an
 * answer and its code (an answer to HEAD has no body, so the SDK's message says only "UnknownError").
 */
function unavailableReason(err: unknown): string {
  const { message, name } = err as Error;
  const status = errorStatus(err);
  if (status === undefined) return message || name;
  const code = errorCode(err);
  const said = message && !GENERIC.has(message) && message !== code ? `: ${message}` : '';
  return `HTTP ${status}${code ? ` ${code}` : ''}${said}`;
}

/** `err` as the API should see it: unreachable, misconfigured, or as it is. */
export function storeError(err: unknown, settings: StoreSettings): unknown {
  if (unavailable(err)) return new BlobStoreUnavailableError(unavailableReason(err), { cause: err });
  const reason = misconfiguration(err, settings);
  return reason ? new BlobStoreMisconfiguredError(reason, { cause: err }) : err;
}
