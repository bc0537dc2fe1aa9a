import { Type } from '@sinclair/typebox';
import { PUBLIC_SCOPES } from './scopes.ts';

export const CredentialMetadata = Type.Object(
  {
    active: Type.Literal(true, { description: 'Always true on a successful response.' }),
    tokenType: Type.Literal('api_key'),
    subjectType: Type.Union([Type.Literal('user'), Type.Literal('workspace')]),
    scopes: Type.Array(Type.Union(PUBLIC_SCOPES.map((s) => Type.Literal(s))), {
      description: 'Granted public scopes; empty when the key has full access.',
    }),
  },
  { $id: 'CredentialMetadata', additionalProperties: false, examples: [{ active: true, tokenType: 'api_key', subjectType: 'user', scopes: ['lists:read'] }] },
);
