// Definitions are operator data that can be corrected (docs/records.md §Correcting definitions): a
// custom field's or relationship's label and description, a select option's label, and a custom
// field archived (hidden everywhere, its values kept) or brought back (setArchived, in
// src/records/definitions-view.ts, which indexes the values again). Ids never change. Every
// write moves the workspace's definitions version (its triggers), so every process sees it.
import type { Ctx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import * as repo from './repository.ts';
import { checkLabel, clashingOption, clashMessage } from './labels.ts';
import { definitionWrite, loadDefinitions } from './service.ts';

export interface RenameInput {
  objectType: string;
  key: string;
  label: string;
  description?: string | null;
}

function trimmedLabel(label: string): string {
  const l = label.trim();
  checkLabel(l);
  return l;
}

/** Renames a custom field or relationship of the type (a field first, as keys are shared). */
export function renameDefinition(ctx: Ctx, input: RenameInput): Promise<{ id: string; label: string }> {
  return definitionWrite(ctx, async (ctx) => {
    const label = trimmedLabel(input.label);
    checkLabel(label, input.description);
    const ws = ctx.actor.workspaceId;
    const defs = await loadDefinitions(ctx, { objectType: input.objectType });
    if (!defs) throw new InputError(`unknown object type "${input.objectType}"`, 'type');
    if (defs.fields.get(input.key)?.system || defs.relationships.get(input.key)?.system)
      throw new InputError(`"${input.key}" is a system definition: its label is fixed`, 'key');
    const set = { label, ...(input.description !== undefined ? { description: input.description } : {}) };
    const field = await repo.findFieldRow(ctx.db, ws, input.objectType, input.key);
    if (field) {
      await repo.updateField(ctx.db, field.id, set);
      return { id: field.id, label };
    }
    const rel = defs.relationships.get(input.key);
    if (!rel || (await repo.updateRelationship(ctx.db, ws, input.objectType, input.key, set)) === 0)
      throw new InputError(`${input.objectType} has no custom field or relationship "${input.key}"`, 'key');
    return { id: rel.id, label };
  });
}

/** Renames an option of a select field, named by its id or its current label. */
export function renameOption(ctx: Ctx, input: { objectType: string; fieldKey: string; option: string; label: string }): Promise<{ id: string; label: string }> {
  return definitionWrite(ctx, async (ctx) => {
    const label = trimmedLabel(input.label);
    const defs = await loadDefinitions(ctx, { objectType: input.objectType });
    // An archived field's options are corrected as a shown one's, as `option add` adds to them: its
    // values keep their option ids for unarchive (docs/records.md §Correcting definitions).
    const field = defs?.fields.get(input.fieldKey) ?? defs?.archived.get(input.fieldKey);
    if (!field?.options) throw new InputError(`${input.objectType} has no select field "${input.fieldKey}"`, 'field');
    const option = field.options.find((o) => o.id === input.option) ?? field.options.find((o) => o.label === input.option);
    if (!option) throw new InputError(`"${input.fieldKey}" has no option "${input.option}"`, 'option');
    const clash = clashingOption(
      field.options.filter((o) => o.id !== option.id),
      label,
    );
    if (clash) throw new InputError(clash.label === label ? `"${input.fieldKey}" already has an option "${label}"` : clashMessage(label, clash), 'label');
    if ((await repo.updateOption(ctx.db, ctx.actor.workspaceId, option.id, { label })) === 0)
      throw new InputError(`option ${option.id} is a default option: its label is fixed`, 'option');
    return { id: option.id, label };
  });
}

/** Corrects the description of an option operators added (a re-import of it, docs/import.md §definition). */
export function describeOption(ctx: Ctx, input: { optionId: string; description: string | null }): Promise<void> {
  return definitionWrite(ctx, async (ctx) => {
    if ((await repo.updateOption(ctx.db, ctx.actor.workspaceId, input.optionId, { description: input.description })) === 0)
      throw new InputError(`option ${input.optionId} is a default option: it takes no description`, 'description');
  });
}
