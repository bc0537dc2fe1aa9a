// The sample records of `rolodex demo` (accounts, contacts, opportunities, a note and a task), linked to the demo
// users and files by externalId.
import type { DemoPart } from '../import/demo-part.ts';

const text = (value: string) => ({ value, valueType: 'TEXT' });
const owner = (u: string) => ({ $owner: { objectType: 'member', values: [u] } });

export const recordsPart: DemoPart = {
  objects: () => [
    {
      object: 'account',
      externalId: 'a-globex',
      fields: {
        $name: text('Globex'),
        $website: { value: ['https://globex.example'], valueType: 'URL' },
        $industry: { value: ['Manufacturing'], valueType: 'MULTI_SELECT' },
        $primaryAddress: { value: { city: 'Springfield', country: 'US' }, valueType: 'ADDRESS' },
      },
      relationships: { ...owner('u-ann'), $files: { objectType: 'file', values: ['file-handbook', 'file-logo'] } },
    },
    {
      object: 'account',
      externalId: 'a-initech',
      fields: { $name: text('Initech'), $headcount: { value: '51-200', valueType: 'SINGLE_SELECT' } },
      relationships: owner('u-bob'),
    },
    {
      object: 'contact',
      externalId: 'c-hank',
      fields: {
        $name: { value: { firstName: 'Hank', lastName: 'Scorpio' }, valueType: 'FULL_NAME' },
        $email: { value: ['hank@globex.example'], valueType: 'EMAIL' },
      },
      relationships: { $account: { objectType: 'account', values: ['a-globex'] } },
    },
    {
      object: 'contact',
      externalId: 'c-peter',
      fields: {
        $name: { value: { firstName: 'Peter', lastName: 'Gibbons' }, valueType: 'FULL_NAME' },
        $email: { value: ['peter@initech.example'], valueType: 'EMAIL' },
      },
      relationships: { $account: { objectType: 'account', values: ['a-initech'] } },
    },
    {
      object: 'contact',
      externalId: 'c-milton',
      fields: { $name: { value: { firstName: 'Milton' }, valueType: 'FULL_NAME' } },
      relationships: { $account: { objectType: 'account', values: ['a-initech'] } },
    },
    {
      object: 'opportunity',
      externalId: 'o-doomsday',
      fields: {
        $name: text('Doomsday device'),
        $stage: { value: 'Negotiation', valueType: 'SINGLE_SELECT' },
      },
      relationships: { ...owner('u-ann'), $account: { objectType: 'account', values: ['a-globex'] }, $champion: { objectType: 'contact', values: ['c-hank'] } },
    },
    {
      object: 'note',
      externalId: 'n-kickoff',
      fields: { $title: text('Kickoff call'), $content: { value: 'Hank wants a **volcano** lair.', valueType: 'MARKDOWN' } },
      relationships: {
        $account: { objectType: 'account', values: ['a-globex'] },
        $opportunity: { objectType: 'opportunity', values: ['o-doomsday'] },
        $createdBy: { objectType: 'member', values: ['u-ann'] },
      },
    },
    {
      object: 'task',
      externalId: 't-proposal',
      fields: { $title: text('Send the proposal'), $status: text('TODO'), $dueAt: { value: '2026-12-01T09:00:00Z', valueType: 'DATETIME' } },
      relationships: {
        $assignedTo: { objectType: 'member', values: ['u-ann'] },
        $opportunity: { objectType: 'opportunity', values: ['o-doomsday'] },
        $note: { objectType: 'note', values: ['n-kickoff'] },
      },
    },
  ],
};
