import { readFileSync } from 'node:fs';

/** The version of package.json, which is the version of the service. */
export function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
