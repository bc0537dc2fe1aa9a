// JSON is the only body format of the API. The parser keeps Fastify's prototype-poisoning
// protection, treats an empty body as absent (optional bodies such as cancel's), and reports
// malformed JSON with the service's own code.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { charsetOf } from '../lib/content-type.ts';
import { deeperThan, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { firstUnheldNumber, shownLiteral, visible } from '../lib/json-numbers.ts';
import { unstorableText } from '../lib/unstorable.ts';

export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * Arrays and objects nested deeper than this are refused (docs/errors.md): what walks a body (the
 * NUL check below, validation, the fingerprint of an Idempotency-Key) recurses, and a 1 MiB body
 * can nest half a million levels, enough to overflow any stack.
 */
export const MAX_BODY_DEPTH = MAX_JSON_DEPTH;

/**
 * The excerpt of the text V8 ends a syntax error with: the whole text when short (`, "[1,]" is not
 * valid JSON`), else some characters about the token with dots before, after or both (`,
 * ..."1,x,1"... is not valid JSON`), or alone (`"undefined" is not valid JSON`).
 */
const EXCERPT = /(?:^|, )(?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s;

/**
 * What is wrong with a body Fastify's parser refused, which it does not say: the syntax error's
 * own message (its position, or the token it met, with unseen characters escaped, and never the
 * excerpt of the body V8 adds) when the text is not JSON, else the prototype key the parser
 * refuses (its prototype-poisoning protection), named so that the client knows what to change.
 */
function jsonError(text: string): AppError {
  try {
    JSON.parse(text);
  } catch (err) {
    const why = visible((err as Error).message.replace(EXCERPT, ''));
    return new AppError('invalid_json', why === '' ? 'The request body is not valid JSON.' : `The request body is not valid JSON: ${why}.`);
  }
  return new AppError('invalid_json', 'The request body holds a "__proto__" key or a "constructor" object with a "prototype" key, which are refused.');
}

export function tooDeep(): AppError {
  return new AppError('invalid_value', `The request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep.`);
}

// Bodies are UTF-8 (docs/errors.md §Request bodies): bytes that are not are refused, never
// replaced by U+FFFD, and a body declared in another charset is refused rather than misread.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A body that is there and is not declared JSON. */
export function notJson(): AppError {
  return new AppError('unsupported_media_type', 'Request bodies must be JSON, sent with Content-Type: application/json.', { param: 'Content-Type' });
}

export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // An empty body is no body (docs/errors.md §Request bodies), whatever Content-Type a client sends
  // with it (some send a form type on every POST): only a body that is there must be JSON.
  app.addContentTypeParser('*', (req, _payload, done) => {
    const length = req.headers['content-length'];
    const empty = req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
    done(empty ? null : notJson(), undefined);
  });
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: JSON_BODY_LIMIT }, (req, body, done) => {
    // A content coding (gzip, br, …) is not decoded: a body declared coded is refused rather than
    // read as the JSON it is not, or as plain when it was declared otherwise.
    const coding = req.headers['content-encoding'];
    if (coding !== undefined && (body as Buffer).length > 0 && !/^\s*identity\s*$/i.test(coding))
      return done(
        new AppError('unsupported_media_type', `Request bodies are not content-coded; Content-Encoding "${coding}" is not accepted.`, {
          param: 'Content-Encoding',
        }),
        undefined,
      );
    // The same holds for a transfer coding: Node undoes only `chunked`, and hands on the bytes of
    // any coding listed before it (`gzip, chunked`) still coded.
    const transfer = req.headers['transfer-encoding'];
    if (transfer !== undefined && (body as Buffer).length > 0 && !/^\s*chunked\s*$/i.test(transfer))
      return done(
        new AppError('unsupported_media_type', `Request bodies take no transfer coding but chunked; Transfer-Encoding "${transfer}" is not accepted.`, {
          param: 'Transfer-Encoding',
        }),
        undefined,
      );
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== undefined && !/^utf-?8$/i.test(charset))
      return done(
        new AppError('unsupported_media_type', `Request bodies are JSON in UTF-8; charset "${charset}" is not accepted.`, { param: 'Content-Type' }),
        undefined,
      );
    let text: string;
    try {
      text = STRICT_UTF8.decode(body as Buffer);
    } catch {
      return done(new AppError('invalid_json', 'The request body is not valid UTF-8.'), undefined);
    }
    if (text.trim() === '') return done(null, undefined);
    void parse(req, text, (err, value) => {
      if (err) return done(jsonError(text), undefined);
      if (deeperThan(value, MAX_BODY_DEPTH)) return done(tooDeep(), undefined);
      // Text neither database stores as sent (a NUL, half of a surrogate pair) is refused here, so
      // that both databases answer alike and nothing is stored changed (src/lib/unstorable.ts).
      const bad = unstorableText(value);
      if (bad !== null)
        return done(
          new AppError('invalid_value', `${bad.path === '' ? 'The request body' : `"${bad.path}"`} ${bad.reason}.`, bad.path === '' ? {} : { param: bad.path }),
          undefined,
        );
      // A number that a double does not hold as written (1e400, 12345678901234567890) is refused
      // with its place rather than stored as another (docs/errors.md §Numbers in bodies); the text
      // is parsed again, with a reviver, only when it could hold one.
      const unheld = firstUnheldNumber(text);
      if (unheld !== null)
        return done(
          new AppError(
            'invalid_value',
            `${unheld.path === '' ? 'The request body' : `"${unheld.path}"`} (${shownLiteral(unheld.source)}) ${unheld.reason}.`,
            unheld.path === '' ? {} : { param: unheld.path },
          ),
          undefined,
        );
      done(null, value);
    });
  });
}
