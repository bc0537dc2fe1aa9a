import type { IncomingMessage } from 'node:http';
import { newId } from '../lib/ids.ts';

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed incoming X-Request-Id (so a caller can trace its own ids); else makes one. */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && WELL_FORMED.test(given)) return given;
  return newId('req');
}
