// The sample records of `rolodex demo` (accounts, contacts, opportunities), linked to the demo
// users and files by externalId.
import type { DemoPart } from '../import/demo-part.ts';

const text = (value: string) => ({ value, valueType: 'TEXT' });
const owner = (u: string) => ({ $owner: { objectType: 'user', values: [u] } });

export const recordsPart: DemoPart = {
  objects: () => [
    {
      object: 'account',
      externalId: 'a-globex',
      fields: {
        $name: text('Globex'),
        $domain: { value: 'https://globex.example', valueType: 'URL' },
        $address: { value: { city: 'Springfield', country: 'US' }, valueType: 'ADDRESS' },
      },
      relationships: { ...owner('u-ann'), $files: { objectType: 'file', values: ['file-handbook', 'file-logo'] } },
    },
    {
      object: 'account',
      externalId: 'a-initech',
      fields: { $name: text('Initech'), $employees: { value: 120, valueType: 'NUMBER' } },
      relationships: owner('u-bob'),
    },
    {
      object: 'contact',
      externalId: 'c-hank',
      fields: {
        $name: { value: { firstName: 'Hank', lastName: 'Scorpio' }, valueType: 'FULL_NAME' },
        $email: { value: 'hank@globex.example', valueType: 'EMAIL' },
        tags: { value: ['decision-maker'], valueType: 'MULTI_SELECT' },
      },
      relationships: { ...owner('u-ann'), $account: { objectType: 'account', values: ['a-globex'] } },
    },
    {
      object: 'contact',
      externalId: 'c-peter',
      fields: {
        $name: { value: { firstName: 'Peter', lastName: 'Gibbons' }, valueType: 'FULL_NAME' },
        $phone: { value: '+1 555 0100', valueType: 'TELEPHONE' },
      },
      relationships: { $account: { objectType: 'account', values: ['a-initech'] } },
    },
    {
      object: 'contact',
      externalId: 'c-milton',
      fields: { $name: { value: { firstName: 'Milton' }, valueType: 'FULL_NAME' }, newsletter: { value: false, valueType: 'CHECKBOX' } },
      relationships: { $account: { objectType: 'account', values: ['a-initech'] } },
    },
    {
      object: 'opportunity',
      externalId: 'o-doomsday',
      fields: {
        $name: text('Doomsday device'),
        $amount: { value: 1_000_000, valueType: 'CURRENCY' },
        $stage: { value: 'Negotiation', valueType: 'SINGLE_SELECT' },
        $closeDate: { value: '2026-09-30T00:00:00Z', valueType: 'DATETIME' },
      },
      relationships: { ...owner('u-ann'), $account: { objectType: 'account', values: ['a-globex'] }, $contacts: { objectType: 'contact', values: ['c-hank'] } },
    },
  ],
};
