/**
 * In-process S3 for tests: s3rver behind a real HTTP server on an ephemeral
 * port. s3rver accepts any SigV4 signature ("calculation is unimplemented"),
 * which would make presigned-URL tests vacuous, so presigned (query-signed)
 * requests are verified here first, the way AWS does: every header listed in
 * X-Amz-SignedHeaders (content-length, content-type, host) must match.
 */
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

export const ACCESS_KEY = 'S3RVER';
const SECRET_KEY = 'S3RVER'; // s3rver's built-in account

interface S3rverInstance {
  configureBuckets(): Promise<void>;
  callback(): http.RequestListener;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverInstance;

export interface TestS3 {
  endpoint: string;
  /** While on, every request is answered 503 ServiceUnavailable, as a store in an outage does. */
  unavailable(on: boolean): void;
  close(): Promise<void>;
}

const rfc3986 = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const hmac = (key: string | Buffer, s: string): Buffer => createHmac('sha256', key).update(s).digest();

/** Returns null when the presigned request is valid, else the reason. */
export function checkPresigned(req: http.IncomingMessage, now = Date.now()): string | null {
  const [rawPath = '', rawQuery = ''] = (req.url ?? '').split('?', 2);
  const query = new URLSearchParams(rawQuery);
  const signature = query.get('X-Amz-Signature');
  const credential = query.get('X-Amz-Credential')?.split('/') ?? [];
  const amzDate = query.get('X-Amz-Date') ?? '';
  const signedHeaders = (query.get('X-Amz-SignedHeaders') ?? '').split(';');
  const [accessKey, shortDate = '', region = '', service = ''] = credential;
  if (!signature || accessKey !== ACCESS_KEY) return 'bad credential';
  const iso = amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z');
  if (now > Date.parse(iso) + Number(query.get('X-Amz-Expires')) * 1000) return 'expired';

  const canonicalQuery = [...query]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
    .sort()
    .join('&');
  const canonicalHeaders = signedHeaders
    .map(
      (h) =>
        `${h}:${String(req.headers[h] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalRequest = [req.method, rawPath, canonicalQuery, canonicalHeaders, signedHeaders.join(';'), 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${shortDate}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET_KEY}`, shortDate), region), service), 'aws4_request');
  return hmac(key, stringToSign).toString('hex') === signature ? null : 'SignatureDoesNotMatch';
}

export async function startTestS3(directory: string, bucket: string): Promise<TestS3> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;
  const s3rver = new S3rver({ directory, silent: true, configureBuckets: [{ name: bucket }] });
  await s3rver.configureBuckets();
  const handle = s3rver.callback();
  let down = false;
  const server = http.createServer((req, res) => {
    if (down) {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' });
      return res.end('<Error><Code>ServiceUnavailable</Code><Message>Please reduce your request rate.</Message></Error>');
    }
    const failure = (req.url ?? '').includes('X-Amz-Signature=') ? checkPresigned(req) : null;
    if (!failure) return handle(req, res);
    req.resume();
    res.writeHead(403, { 'content-type': 'application/xml' });
    res.end(`<Error><Code>AccessDenied</Code><Message>${failure}</Message></Error>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    unavailable: (on) => (down = on),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
