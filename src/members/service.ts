// Members (docs/design.md §Members): the workspace's users, read-only through the API. The users
// module owns the table and its SQL; this module shapes the public member resource.
import type { Static } from '@sinclair/typebox';
import type { Ctx } from '../lib/context.ts';
import { notFound } from '../lib/errors.ts';
import { envelope, type Page } from '../lib/paging.ts';
import * as users from '../users/repository.ts';
import { fullName } from '../users/service.ts';
import type { MemberIdParams } from './schemas.ts';

export function toResource(ctx: Pick<Ctx, 'links'>, row: users.UserRow) {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    httpLink: ctx.links.http('members', row.id),
    fields: {
      $email: { value: row.email, valueType: 'EMAIL' as const },
      $name: { value: fullName(row), valueType: 'FULL_NAME' as const },
      $profileImage: { value: row.profile_image_url, valueType: 'URL' as const },
      $role: { value: row.role, valueType: 'TEXT' as const },
    },
    relationships: {},
  };
}

export async function getMember(ctx: Ctx, input: Static<typeof MemberIdParams>) {
  const row = await users.findUser(ctx.db, ctx.actor.workspaceId, input.id);
  if (!row) throw notFound('member', input.id);
  return toResource(ctx, row);
}

export async function listMembers(ctx: Ctx, input: Page) {
  const { total, rows } = await users.pageUsers(ctx.db, ctx.actor.workspaceId, input);
  return envelope(
    rows.map((r) => toResource(ctx, r)),
    total,
  );
}
