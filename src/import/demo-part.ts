// What one resource contributes to `rolodex demo`: import objects (docs/design.md §Import format)
// and, optionally, work after the import (lists are not importable, for example). Each resource
// keeps its part in its own demo.ts; src/cli/demo-parts.ts lists them.
import type { Config } from '../config.ts';
import type { Db } from '../db/types.ts';
import type { ImportResult } from './run.ts';

export interface DemoContext {
  db: Db;
  config: Config;
  workspaceId: string;
  imported: ImportResult;
  extras: Record<string, unknown>;
}

export interface DemoPart {
  objects?(): Array<Record<string, unknown>>;
  /** Returns lines to print (sample curl commands and the like). */
  after?(ctx: DemoContext): Promise<string[]>;
}
