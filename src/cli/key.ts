import { holdsSecret } from '../auth/secrets.ts';
import { createKey, keyOfSecret, listKeys, parseDuration, parseScopes, revokeKey } from '../auth/service.ts';
import { systemCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { findUserRef } from '../users/service.ts';
import { requireWorkspace } from '../workspaces/service.ts';
import { type Io, onlyOptionsOf, operator, parse, print, required, subcommand, takes, UsageError, withDb } from './io.ts';

export const usage = `rolodex key create --workspace W [--user U] [--scopes a,b] [--expires-in 30d] [--json]
rolodex key list --workspace W [--json]
rolodex key revoke KEY_ID [--json]
  (U: a user's id, externalId or email)`;

export async function run(args: string[], io: Io): Promise<void> {
  const [sub, rest] = subcommand(args, ['create', 'list', 'revoke']);
  const { values, positionals } = parse(
    rest,
    {
      workspace: { type: 'string' },
      user: { type: 'string' },
      scopes: { type: 'string' },
      'expires-in': { type: 'string' },
    },
    takes(sub, { create: 0, list: 0, revoke: 1 }),
  );
  onlyOptionsOf(usage, sub, values);
  const json = values.json as boolean | undefined;
  if (sub === 'create') {
    const workspaceId = required(values, 'workspace');
    let scopes, expiresInMs;
    try {
      scopes = values.scopes === undefined ? null : parseScopes(String(values.scopes).split(','));
      expiresInMs = values['expires-in'] === undefined ? null : parseDuration(String(values['expires-in']));
    } catch (err) {
      // The service's words, after the option they are about.
      if (err instanceof InputError) throw new UsageError(`--${err.param}: ${err.message}`, err.param);
      throw err;
    }
    const user = values.user as string | undefined;
    const key = await withDb(io, async (db, config) => {
      const ctx = operator(db, config, workspaceId);
      await requireWorkspace(ctx);
      // U names a user as every command does, by id, externalId or email (docs/cli.md).
      const userId = user === undefined ? null : await findUserRef(ctx, { ref: user });
      return createKey(ctx, { userId, scopes, expiresInMs });
    });
    const out = { id: key.id, secret: key.secret, subjectType: key.subjectType, scopes: key.scopes, expiresAt: key.expiresAt };
    const made = `${key.id}  ${accessOf(key)}  ${key.expiresAt ? `expires ${key.expiresAt}` : 'never expires'}`;
    print(io, json, out, `created ${key.subjectType} key ${made}\nsecret (shown once): ${key.secret}`);
  } else if (sub === 'list') {
    const workspaceId = required(values, 'workspace');
    const keys = await withDb(io, (db, config) => listKeys(operator(db, config, workspaceId)));
    // A user key's line names its user: the keys to revoke when a user leaves are found without --json.
    const text = keys.map((k) => `${k.id}  ${k.prefix}…  ${k.userId ? `user ${k.userId}` : 'workspace'}  ${accessOf(k)}${stateOf(k)}`);
    print(io, json, keys, text.join('\n') || 'no keys');
  } else if (sub === 'revoke') {
    const id = positionals[0];
    if (!id) throw new UsageError('the id of the key to revoke is required');
    // A secret pasted in place of the id is never printed back, nor taken: the key it opens is
    // named, to be revoked by its id (docs/cli.md).
    if (holdsSecret(id)) throw new UsageError(secretGiven(await withDb(io, (db) => keyOfSecret(systemCtx(db.kysely), id))));
    const key = await withDb(io, (db) => revokeKey(systemCtx(db.kysely), { id }));
    const text = key.alreadyRevoked ? `key ${key.id} is revoked already (since ${key.revokedAt ?? ''}); nothing changed` : `revoked key ${key.id}`;
    print(io, json, key, text);
  } else {
    throw new UsageError(`unknown subcommand "${sub ?? ''}"`);
  }
}

const accessOf = (k: { scopes: string[] }): string => k.scopes.join(',') || 'full access';

/** What a listed key's line ends with: when an active key expires, if it does; else why it opens no request. */
function stateOf(k: { status: 'active' | 'expired' | 'revoked'; expiresAt: string | null }): string {
  if (k.status === 'revoked') return '  revoked';
  if (k.status === 'expired') return `  expired ${k.expiresAt ?? ''}`;
  return k.expiresAt ? `  expires ${k.expiresAt}` : '';
}

/** The refusal of a secret given to `key revoke`, naming the key it opens (if any) but not the secret. */
function secretGiven(key: Awaited<ReturnType<typeof keyOfSecret>>): string {
  const head = "revoke takes the key's id, not its secret (not printed here)";
  if (!key) return `${head}, and what was given is no key's secret: \`rolodex key list --workspace W\` shows the ids`;
  const which = `that secret is key ${key.id} of workspace ${key.workspaceId}`;
  if (key.revokedAt) return `${head}: ${which}, revoked already (since ${key.revokedAt})`;
  return `${head}: ${which}; to revoke it, run \`rolodex key revoke ${key.id}\``;
}
