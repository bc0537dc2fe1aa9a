// The version header (docs/design.md §Requests). VERSION_HEADERS names every header accepted as
// the version header, so that clients whose SDK sends another name (the hosted original's sends
// Lightfield-Version) work unchanged. Everything per name is computed once, when the app is built:
// a request costs one header lookup per accepted name and allocates nothing unless it fails.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { SERVICE_VERSION, SUPPORTED_VERSIONS } from './context.ts';
import { severalLines } from './field-lines.ts';

export interface VersionHeaders {
  /** Refuses a request whose version header is missing, unsupported or contradicted (400 version_header). */
  check(request: FastifyRequest): void;
  /** Echoes, beside Service-Version, every other accepted name the request used; null when there is none. */
  echo: ((request: FastifyRequest, reply: FastifyReply) => void) | null;
}

const SUPPORTED: readonly string[] = SUPPORTED_VERSIONS;

export function versionHeaders(names: readonly string[]): VersionHeaders {
  const lower = names.map((n) => n.toLowerCase());
  const aliases = names.filter((n) => n.toLowerCase() !== 'service-version');
  const aliasLower = aliases.map((n) => n.toLowerCase());
  const accepted = names.length === 1 ? (names[0] as string) : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  const supported = SUPPORTED.join(', ');
  const versionError = (message: string, param: string) => new AppError('version_header', `${message}; supported versions: ${supported}.`, { param });

  // The version names one value: Node joins two lines of the header with ", ", which no version
  // is, so the refusal says the header came twice rather than that the joined text is unknown.
  function sentTwice(request: FastifyRequest, name: string): AppError | null {
    return severalLines(request.raw.rawHeaders, name.toLowerCase()) ? versionError(`The request has more than one ${name} header; send one`, name) : null;
  }

  function unsupported(request: FastifyRequest, name: string, value: unknown): AppError {
    const twice = sentTwice(request, name);
    if (twice) return twice;
    const shown = typeof value === 'string' ? value : String(value);
    return versionError(`The ${name} header "${shown}" is not a supported version`, name);
  }

  function missing(): AppError {
    return versionError(`The version header is missing: send ${accepted}`, names[0] as string);
  }

  const only = lower.length === 1 ? (lower[0] as string) : null;
  function check(request: FastifyRequest): void {
    if (only !== null) {
      const v = request.headers[only];
      if (v === SERVICE_VERSION || (typeof v === 'string' && SUPPORTED.includes(v))) return;
      throw v === undefined ? missing() : unsupported(request, names[0] as string, v);
    }
    let value: string | string[] | undefined;
    let used = -1;
    for (let i = 0; i < lower.length; i++) {
      const v = request.headers[lower[i] as string];
      if (v === undefined) continue;
      if (used === -1) {
        value = v;
        used = i;
      } else if (v !== value) {
        throw (
          sentTwice(request, names[used] as string) ??
          sentTwice(request, names[i] as string) ??
          versionError(
            `The version headers disagree: ${names[used]} is "${String(value)}" but ${names[i]} is "${String(v)}"; send one of ${accepted}, or the same value in each`,
            names[i] as string,
          )
        );
      }
    }
    if (used === -1) throw missing();
    if (typeof value !== 'string' || !SUPPORTED.includes(value)) throw unsupported(request, names[used] as string, value);
  }

  const echo =
    aliases.length === 0
      ? null
      : (request: FastifyRequest, reply: FastifyReply) => {
          for (let i = 0; i < aliases.length; i++)
            if (request.headers[aliasLower[i] as string] !== undefined) reply.header(aliases[i] as string, SERVICE_VERSION);
        };

  return { check, echo };
}
