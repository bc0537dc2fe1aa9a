// The users of `rolodex demo`: Ann (admin) and Bob (member); other parts refer to them by
// externalId (u-ann, u-bob).
import type { DemoPart } from '../import/demo-part.ts';

export const usersPart: DemoPart = {
  objects: () => [
    {
      object: 'user',
      externalId: 'u-ann',
      email: 'ann@acme.test',
      firstName: 'Ann',
      lastName: 'Admin',
      role: 'admin',
      profileImageUrl: 'https://images.example.com/ann.png',
    },
    { object: 'user', externalId: 'u-bob', email: 'bob@acme.test', firstName: 'Bob', lastName: 'Member', role: 'member' },
  ],
  after: async () => [`curl -s -H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01" {base}/v1/members`],
};
