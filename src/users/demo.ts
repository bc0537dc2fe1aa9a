// The users of `rolodex demo`: Ann (admin) and Bob (member); other parts refer to them by
// externalId (u-ann, u-bob).
import type { DemoPart } from '../import/demo-part.ts';

export const usersPart: DemoPart = {
  objects: () => [
    { object: 'user', externalId: 'u-ann', email: 'ann@acme.test', name: 'Ann Admin', role: 'admin' },
    { object: 'user', externalId: 'u-bob', email: 'bob@acme.test', name: 'Bob Member', role: 'member' },
  ],
};
