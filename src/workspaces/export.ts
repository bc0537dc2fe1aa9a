// `rolodex export` of the workspace's settings (docs/import.md §Export): one `workspace` line, when
// any setting is set, so that the import of the export reads records as this workspace does.
import type { Ctx } from '../lib/context.ts';
import { findWorkspace } from './repository.ts';

export async function* workspaceLines(ctx: Ctx): AsyncGenerator<Record<string, unknown>> {
  const ws = await findWorkspace(ctx.db, ctx.actor.workspaceId);
  if (ws?.default_country) yield { object: 'workspace', defaultCountry: ws.default_country };
}
