// Users of a workspace: administered by operators through the CLI and loaded by import; the public
// API shows them, read-only, as members (src/members/). A name is kept as its two parts
// (docs/design.md §Members).
import type { Ctx } from '../lib/context.ts';
import { emailKey, unheldCharacter } from '../lib/email.ts';
import { InputError } from '../lib/errors.ts';
import { isoNow, newId } from '../lib/ids.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import * as repo from './repository.ts';
import { blank, longerThan } from '../lib/chars.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_NAME = 255;
const MAX_URL = 2048;

export interface UserInput {
  email: string;
  /** A whole name, split at its first space; not together with firstName or lastName. */
  name?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  role?: string;
  profileImageUrl?: string | null;
  externalId?: string | null;
}

/** The checked fields of a user, as stored. */
export interface CheckedUser {
  email: string;
  firstName: string | null;
  lastName: string | null;
  role: 'admin' | 'member';
  profileImageUrl: string | null;
}

/** The name of a user as a FullName: a part that is not known is left out. */
export function fullName(row: Pick<repo.UserRow, 'first_name' | 'last_name'>): { firstName?: string; lastName?: string } {
  return { ...(row.first_name !== null ? { firstName: row.first_name } : {}), ...(row.last_name !== null ? { lastName: row.last_name } : {}) };
}

export function toResource(r: repo.UserRow) {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    profileImageUrl: r.profile_image_url,
    role: r.role,
    externalId: r.external_id,
    createdAt: r.created_at,
  };
}

/** A whole name split at its first run of spaces: the first word, and the rest (docs/design.md §Members). */
export function splitName(name: string): { firstName: string | null; lastName: string | null } {
  const m = /^(\S+)\s*([\s\S]*)$/.exec(name.trim());
  if (!m) return { firstName: null, lastName: null };
  return { firstName: m[1] as string, lastName: (m[2] as string).trim() || null };
}

// A name or part that shows nothing (white space, invisible characters: docs/records.md §Writing
// fields) is not known, as a contact's FULL_NAME of such parts is refused.
const given = (v: string | null | undefined): boolean => v != null && !blank(v);

function namePart(value: string | null | undefined, what: string, param: string): string | null {
  const v = given(value) ? (value as string).trim() : null;
  if (v !== null && longerThan(v, MAX_NAME)) throw new InputError(`the ${what} must be at most ${MAX_NAME} characters`, param);
  return v;
}

/** An absolute http or https URL, at most 2,048 characters; empty means none. */
function imageUrl(value: string | null | undefined, param: string): string | null {
  const v = value?.trim() || null;
  if (v === null) return null;
  if (longerThan(v, MAX_URL)) throw new InputError(`the profile image must be a URL of at most ${MAX_URL} characters`, param);
  const u = URL.parse(v);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
    throw new InputError(`the profile image must be an absolute http or https URL (got "${v}")`, param);
  return v;
}

/**
 * The checked fields of a user; the InputError of a bad one names it (email, name, firstName,
 * lastName, role or profileImageUrl).
 */
export function checkUser(input: UserInput): CheckedUser {
  const email = input.email.trim().toLowerCase();
  const unheld = unheldCharacter(email);
  if (unheld !== undefined) throw new InputError(`invalid email: it holds ${unheld}, a control or invisible character no address holds`, 'email');
  if (!EMAIL.test(email) || longerThan(email, 320)) throw new InputError(`invalid email "${input.email}"`, 'email');
  const role = input.role ?? 'member';
  if (role !== 'admin' && role !== 'member') throw new InputError(`role must be admin or member (got "${role}")`, 'role');
  const whole = given(input.name);
  if (whole && (given(input.firstName) || given(input.lastName))) throw new InputError('give either name or firstName and lastName, not both', 'name');
  const parts = whole ? splitName(input.name as string) : { firstName: input.firstName, lastName: input.lastName };
  const firstName = namePart(parts.firstName, 'first name', whole ? 'name' : 'firstName');
  const lastName = namePart(parts.lastName, 'last name', whole ? 'name' : 'lastName');
  return { email, firstName, lastName, role, profileImageUrl: imageUrl(input.profileImageUrl, 'profileImageUrl') };
}

/** The columns of checked fields; the address's key makes its two spellings one user's (docs/design.md §Members). */
export function userColumns(u: CheckedUser): Pick<repo.UserRow, 'email' | 'email_key' | 'first_name' | 'last_name' | 'profile_image_url' | 'role'> {
  return { email: u.email, email_key: emailKey(u.email), first_name: u.firstName, last_name: u.lastName, profile_image_url: u.profileImageUrl, role: u.role };
}

export async function createUser(ctx: Ctx, input: UserInput) {
  await requireWorkspace(ctx);
  const checked = checkUser(input);
  const at = isoNow(ctx.now);
  const row: repo.UserRow = {
    id: newId('usr', ctx.now),
    workspace_id: ctx.actor.workspaceId,
    external_id: input.externalId ?? null,
    ...userColumns(checked),
    created_at: at,
    updated_at: at,
  };
  if (!(await repo.insertUser(ctx.db, row))) throw new InputError(`a user with email "${checked.email}" already exists in this workspace`, 'email');
  return toResource(row);
}

export async function listUsers(ctx: Ctx) {
  await requireWorkspace(ctx);
  return (await repo.listUsers(ctx.db, ctx.actor.workspaceId)).map(toResource);
}

/** Refuses a user id that is not one of the workspace's users. */
export async function requireUser(ctx: Ctx, input: { id: string }): Promise<void> {
  if (!(await repo.findUser(ctx.db, ctx.actor.workspaceId, input.id)))
    throw new InputError(`no user "${input.id}" in workspace ${ctx.actor.workspaceId}`, 'user');
}

/**
 * A user of the workspace by id, externalId or email. A reference that is one user's externalId
 * and another's email names neither: it is refused, never resolved to either (docs/cli.md).
 */
export async function findUserRef(ctx: Ctx, input: { ref: string }): Promise<string> {
  const ids = await repo.findUsersByRef(ctx.db, ctx.actor.workspaceId, input.ref);
  if (ids.length === 0) throw new InputError(`no user "${input.ref}" in workspace ${ctx.actor.workspaceId}`, 'user');
  if (ids.length > 1)
    throw new InputError(`"${input.ref}" names more than one user (${ids.join(', ')}: an externalId and an email); name the user by its id`, 'user');
  return ids[0]!;
}
