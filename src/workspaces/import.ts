// The `workspace` import kind (docs/import.md §`workspace`): the settings of the workspace imported
// into, which records are read with (its default country places national telephone numbers), so
// that an export imported into an empty workspace reads its numbers as the exported one did. A
// line needs no externalId (one given only names it, as a definition line's does); a file holds
// one line. A member the line leaves out leaves that setting as it is.
import { ImportError, type ImportKind, onlyFields } from '../import/kind.ts';
import { InputError } from '../lib/errors.ts';
import { isPhoneCountry } from '../lib/phone.ts';
import { findWorkspace } from './repository.ts';
import { setDefaultCountry } from './service.ts';

export interface WorkspaceSettings {
  /** ISO 3166-1 alpha-2, null to clear it; absent: left as it is. */
  defaultCountry?: string | null;
}

export const workspaceKind: ImportKind<WorkspaceSettings> = {
  object: 'workspace',
  check(raw) {
    onlyFields(raw, ['defaultCountry']);
    const v = raw.defaultCountry;
    if (v === undefined) return {};
    if (v !== null && (typeof v !== 'string' || !isPhoneCountry(v.toUpperCase())))
      throw new InputError('must be an ISO 3166-1 alpha-2 country code such as "DE", or null', 'defaultCountry');
    return { defaultCountry: v === null ? null : v.toUpperCase() };
  },
  nameOf: () => 'workspace',
  lookup: async () => new Map(),
  whole: true,
  async upsert(ctx, items) {
    // Lines named alike were refused as one name given twice; lines named apart are refused here.
    const [first, second] = items;
    if (second) throw new ImportError(second.line, '(object)', `line ${first!.line} is a workspace line too: a file holds one`);
    for (const { externalId, value } of items) {
      // Setting what the workspace holds changes nothing, so the definitions' version stays.
      const held = (await findWorkspace(ctx.db, ctx.actor.workspaceId))?.default_country ?? null;
      if (value.defaultCountry !== undefined && value.defaultCountry !== held) await setDefaultCountry(ctx, { country: value.defaultCountry });
      ctx.register('workspace', externalId, ctx.actor.workspaceId);
    }
  },
};
