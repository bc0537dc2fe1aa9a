// What one resource contributes to `rolodex demo`: import objects (docs/design.md §Import format)
// and, optionally, work after the import that needs the ids it made (the demo's lists). Each
// resource keeps its part in its own demo.ts; src/cli/demo-parts.ts lists them.
import type { Ctx } from '../lib/context.ts';
import type { ImportResult } from './run.ts';

/** The demo workspace's operator ctx (ctx.db is the database), and what the import made. */
export interface DemoContext extends Ctx {
  imported: ImportResult;
}

export interface DemoPart {
  objects?(): Array<Record<string, unknown>>;
  /** Returns lines to print (sample curl commands and the like). */
  after?(ctx: DemoContext): Promise<string[]>;
}
