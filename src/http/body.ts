// JSON is the only body format of the API. The parser keeps Fastify's prototype-poisoning
// protection, treats an empty body as absent (optional bodies such as cancel's), and reports
// malformed JSON with the service's own code.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { findNul } from './validation.ts';

export const JSON_BODY_LIMIT = 1024 * 1024;

export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT }, (req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    void parse(req, text, (err, value) => {
      if (err) return done(new AppError('invalid_json', `The request body is not valid JSON: ${err.message}`), undefined);
      // PostgreSQL text cannot hold NUL; refusing it here keeps both databases alike and no
      // write fails halfway with a database error.
      const nul = findNul(value);
      if (nul !== null)
        return done(
          new AppError('invalid_value', `${nul === '' ? 'The request body' : `"${nul}"`} contains a NUL character.`, nul === '' ? {} : { param: nul }),
          undefined,
        );
      done(null, value);
    });
  });
}
