// The one rule of channel visibility (docs/design.md §Message visibility), written once here and
// used by every read of channels and of messages, so that a channel is visible exactly when its
// messages can be:
// - visible: the channel is not private, or the caller is one of its members;
// - FULL access: the channel is public, or the caller is one of its members (otherwise, in a
//   restricted channel, METADATA).
// A workspace key is a member of no channel; an admin is no exception.
import { type RawBuilder, sql, type SqlBool } from 'kysely';

export interface Caller {
  workspaceId: string;
  /** null for a workspace key: membership never applies. */
  userId: string | null;
}

// SQL text: the caller is a member of channel alias `c`; `user` is the SQL text of its user id
// (a bound parameter), null for a workspace key.
const memberText = (c: string, user: string | null) =>
  user === null ? '1 = 0' : `exists (select 1 from channel_members cm where cm.channel_id = ${c}.id and cm.user_id = ${user})`;

/** SQL text: channel alias `c` is visible to the caller whose user id is the SQL text `user` (null: a workspace key). */
export function visibleText(c: string, user: string | null): string {
  return `(${c}.visibility <> 'private' or ${memberText(c, user)})`;
}

/** SQL text: the caller reads channel alias `c`'s messages at FULL access. */
export function fullText(c: string, user: string | null): string {
  return `(${c}.visibility = 'public' or ${memberText(c, user)})`;
}

// Stands for the caller's user id in the texts above, then is replaced by a bound parameter.
const USER = '\u0000user\u0000';

function bind(text: string, userId: string | null): RawBuilder<unknown> {
  return sql.join(
    text.split(USER).map((part) => sql.raw(part)),
    sql`${userId}`,
  );
}

/** The visibility predicate for the caller, on channel alias `c`, as a Kysely fragment. */
export function visible(caller: Caller, c = 'c'): RawBuilder<SqlBool> {
  return bind(visibleText(c, caller.userId === null ? null : USER), caller.userId).$castTo<SqlBool>();
}

/** The caller reads channel alias `c`'s messages at FULL (so `c` is visible to it), as a Kysely fragment. */
export function fullAccess(caller: Caller, c = 'c'): RawBuilder<SqlBool> {
  return bind(fullText(c, caller.userId === null ? null : USER), caller.userId).$castTo<SqlBool>();
}

/** 'FULL' or 'METADATA': the caller's access to channel alias `c`'s messages (for a visible channel). */
export function accessLevel(caller: Caller, c = 'c'): RawBuilder<unknown> {
  return bind(`case when ${fullText(c, caller.userId === null ? null : USER)} then 'FULL' else 'METADATA' end`, caller.userId);
}
