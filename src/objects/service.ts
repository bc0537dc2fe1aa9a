// Records of custom object types (docs/activities.md §Custom objects) through the one record
// engine: the slug names the type; an unknown slug, or an id of another type, is not found.
import { findObjectType, listObjectTypes } from '../definitions/object-types.ts';
import type { Ctx, WriteCtx } from '../lib/context.ts';
import { AppError } from '../lib/errors.ts';
import type { Page } from '../lib/paging.ts';
import { getDefinitions } from '../records/service.ts';
import { customRecordType, type RecordType, getRecord, listRecords } from '../records/service.ts';
import { createRecord, updateRecord, type WriteInput } from '../records/service.ts';
import { type MergeInput, mergeRecords } from '../merges/service.ts';
import { trashRecord } from '../trash/service.ts';
import { fieldHistory, type HistoryInput } from '../records/service.ts';

async function requireType(ctx: Ctx, slug: string): Promise<RecordType> {
  const found = await findObjectType(ctx, slug);
  if (!found) throw new AppError('resource_not_found', `No object type "${slug}" exists.`, { param: 'entitySlug' });
  return customRecordType(found.objectType);
}

export async function objectTypes(ctx: Ctx) {
  return { data: await listObjectTypes(ctx) };
}

/** `query`: limit, offset and the filters of docs/filtering.md. */
export async function listObjectRecords(ctx: Ctx, input: { entitySlug: string; query: Page & Readonly<Record<string, unknown>> }) {
  return listRecords(ctx, { type: await requireType(ctx, input.entitySlug), query: input.query });
}

export async function objectDefinitions(ctx: Ctx, input: { entitySlug: string }) {
  return getDefinitions(ctx, { type: await requireType(ctx, input.entitySlug) });
}

export async function getObjectRecord(ctx: Ctx, input: { entitySlug: string; id: string }) {
  return getRecord(ctx, { ...input, type: await requireType(ctx, input.entitySlug) });
}

export async function createObjectRecord(ctx: WriteCtx, input: WriteInput & { entitySlug: string }) {
  return createRecord(ctx, { ...input, type: await requireType(ctx, input.entitySlug) });
}

export async function updateObjectRecord(ctx: WriteCtx, input: WriteInput & { entitySlug: string; id: string }) {
  return updateRecord(ctx, { ...input, type: await requireType(ctx, input.entitySlug) });
}

export async function deleteObjectRecord(ctx: WriteCtx, input: { entitySlug: string; id: string }) {
  return trashRecord(ctx, await requireType(ctx, input.entitySlug), input);
}

export async function mergeObjectRecords(ctx: WriteCtx, input: MergeInput & { entitySlug: string }) {
  return mergeRecords(ctx, await requireType(ctx, input.entitySlug), input);
}

export async function objectFieldHistory(ctx: Ctx, input: HistoryInput & { entitySlug: string }) {
  return fieldHistory(ctx, { ...input, type: await requireType(ctx, input.entitySlug) });
}
