// The sample records of `rolodex demo` (accounts, contacts, opportunities, a note and a task), linked to the demo
// users and files by externalId, and the printed calls that create, read, update and filter
// records through the API. A filter's brackets go through curl's -g (no URL globbing) inside
// single quotes, so neither curl nor the shell touches `$` or `[]` (docs/filtering.md).
import type { DemoPart } from '../import/demo-part.ts';

const text = (value: string) => ({ value, valueType: 'TEXT' });
const owner = (u: string) => ({ $owner: { objectType: 'member', values: [u] } });

/** A `curl` line; `{key}` and `{base}` are filled in by `rolodex demo`. */
export function demoCurl(method: 'GET' | 'POST', path: string, body?: unknown): string {
  const h = '-H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01"';
  if (body === undefined) return `curl -s -g ${h} '{base}${path}'`;
  // JSON.stringify never emits a single quote unescaped here: the demo bodies hold none.
  return `curl -s -g -X ${method} ${h} -H "Content-Type: application/json" -d '${JSON.stringify(body)}' '{base}${path}'`;
}

export const recordsPart: DemoPart = {
  after(ctx) {
    const id = (kind: string, ext: string) => ctx.imported.ids[kind]?.[ext] as string;
    const globex = id('account', 'a-globex');
    const ann = id('user', 'u-ann');
    return Promise.resolve([
      demoCurl('POST', '/v1/contacts', {
        fields: { $name: { firstName: 'Lisa', lastName: 'Simpson' }, $email: ['lisa@globex.example'] },
        relationships: { $account: globex },
      }),
      demoCurl('GET', `/v1/contacts/${id('contact', 'c-hank')}`),
      demoCurl('POST', `/v1/accounts/${globex}`, { fields: { $headcount: '201-500' } }),
      demoCurl('GET', '/v1/contacts?$name[startsWith]=hank&limit=5'),
      demoCurl('GET', `/v1/opportunities?$account=${globex}&$stage=Negotiation`),
      demoCurl('POST', '/v1/notes', {
        fields: { $title: 'Call with Lisa', $content: 'She runs the **monorail** project.' },
        relationships: { $account: globex },
      }),
      demoCurl('POST', '/v1/tasks', {
        fields: { $title: 'Send Lisa the proposal', $status: 'TODO', $dueAt: '2026-12-15T09:00:00Z' },
        relationships: { $assignedTo: ann, $opportunity: id('opportunity', 'o-doomsday') },
      }),
      demoCurl('GET', '/v1/tasks?limit=5'),
    ]);
  },
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
