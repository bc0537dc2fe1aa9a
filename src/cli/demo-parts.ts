// What `rolodex demo` loads, one part per resource. Each part contributes import objects
// (docs/design.md §Import format) and may do more after the import (lists are not importable, for
// example).
import type { Config } from '../config.ts';
import type { Db } from '../db/types.ts';
import type { ImportResult } from '../import/run.ts';
import { messagesPart } from '../messages/demo.ts';
import { recordsPart } from '../lists/demo.ts';
import { filesDemoPart } from '../files/demo.ts';

export interface DemoContext {
  db: Db;
  config: Config;
  workspaceId: string;
  imported: ImportResult;
  extras: Record<string, unknown>;
}

export interface DemoPart {
  objects(): Array<Record<string, unknown>>;
  /** Returns lines to print (sample curl commands and the like). */
  after?(ctx: DemoContext): Promise<string[]>;
}

export const peoplePart: DemoPart = {
  objects: () => [
    { object: 'user', externalId: 'u-ann', email: 'ann@acme.test', name: 'Ann Admin', role: 'admin' },
    { object: 'user', externalId: 'u-bob', email: 'bob@acme.test', name: 'Bob Member', role: 'member' },
  ],
};

export function demoParts(): DemoPart[] {
  return [peoplePart, filesDemoPart(), recordsPart, messagesPart];
}
