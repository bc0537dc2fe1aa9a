// The workload of the wire-conformance check (docs/conformance.md): `rolodex demo`'s own curl lines,
// then every served operation once more with successes and the usual errors (401, 403, 404, 400
// for a bad field, value, filter or version, 409 for a reused idempotency key, 415), and the
// changes of the original's newer releases (channels, notes' and meetings' definitions, a note's
// $contact with add and remove together, accounts made for attendees, 500 recipients, e-mail at
// METADATA, Lightfield-Version), through real HTTP. Each response goes to `check`.
import { createHash } from 'node:crypto';
import type { Io } from '../src/cli/io.ts';
import { main } from '../src/cli/main.ts';

export interface Sent {
  method: string;
  url: string;
  status: number;
  body: unknown;
}

type Check = (r: Sent) => void;

/** Splits a shell line as bash would for the quoting the demo uses ('…', "…", bare words, # comment). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let cur: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      cur = (cur ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = line.indexOf('"', i + 1);
      cur = (cur ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === ' ') {
      if (cur !== null) words.push(cur);
      cur = null;
    } else if (c === '#' && cur === null) {
      break;
    } else cur = (cur ?? '') + c;
  }
  if (cur !== null) words.push(cur);
  return words;
}

/** The request a demo curl line makes (-X, -H, -d; -s, -S, -g change nothing on the wire). */
export function curlRequest(line: string): { method: string; url: string; headers: Record<string, string>; body?: string } {
  const words = shellWords(line).slice(1);
  const headers: Record<string, string> = {};
  let method: string | undefined;
  let body: string | undefined;
  let url = '';
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (w === '-X') method = words[++i];
    else if (w === '-H') {
      const h = words[++i] as string;
      headers[h.slice(0, h.indexOf(':')).toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
    } else if (w === '-d') body = words[++i];
    else if (w.startsWith('-')) continue;
    else url = w;
  }
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, ...(body === undefined ? {} : { body }) };
}

async function cli(env: Record<string, string>, ...args: string[]): Promise<string> {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (x) => out.push(x), err: (x) => err.push(x), env, isTty: false };
  if ((await main(args, io)) !== 0) throw new Error(`rolodex ${args.join(' ')} failed: ${err.join('')}`);
  return out.join('');
}

interface Demo {
  workspace: { id: string };
  examples: string[];
  ids: Record<string, Record<string, string>>;
  keys: Record<string, { secret: string }>;
}

/** Custom account fields of every valueType, with a value of each (definitions come from the CLI, as operators add them). */
const CUSTOM: Array<[key: string, valueType: string, value: unknown, extra: string[]]> = [
  ['c_address', 'ADDRESS', { street: '1 Main St', city: 'Berlin', country: 'de', latitude: 52.5, longitude: 13.4 }, []],
  ['c_checkbox', 'CHECKBOX', true, []],
  ['c_currency', 'CURRENCY', 12.5, ['--currency', 'EUR']],
  ['c_datetime', 'DATETIME', '2026-05-01T10:00:00+02:00', []],
  ['c_email', 'EMAIL', ['a@vandelay.example', 'b@vandelay.example'], ['--multiple-values']],
  ['c_markdown', 'MARKDOWN', '**bold**', []],
  ['c_multi', 'MULTI_SELECT', ['Red'], []],
  ['c_number', 'NUMBER', -3.25, []],
  ['c_single', 'SINGLE_SELECT', 'Gold', ['--unique']],
  ['c_social', 'SOCIAL_HANDLE', 'vandelay', ['--handle-service', 'TWITTER']],
  ['c_phone', 'TELEPHONE', '+1 (555) 010-0100', []],
  ['c_text', 'TEXT', 'plain', []],
  ['c_url', 'URL', 'https://vandelay.example/about', []],
];

export async function runWorkload(base: string, env: Record<string, string>, check: Check): Promise<void> {
  const d = JSON.parse(await cli(env, 'demo', '--json')) as Demo;
  const ws = ['--workspace', d.workspace.id, '--type', 'account'];
  for (const [key, valueType, , extra] of CUSTOM) await cli(env, 'definition', 'add', ...ws, '--key', key, '--label', key, '--value-type', valueType, ...extra);
  for (const [field, label] of [
    ['c_multi', 'Red'],
    ['c_multi', 'Blue'],
    ['c_single', 'Gold'],
  ])
    await cli(env, 'definition', 'option', 'add', ...ws, '--field', field as string, '--label', label as string);
  await cli(env, 'definition', 'add', ...ws, '--key', 'c_partner', '--label', 'Partner', '--relationship', '--cardinality', 'has_one', '--target', 'project');
  const admin = d.keys.admin?.secret as string;
  const readOnly = d.keys.readOnly?.secret as string;
  const send = async (method: string, url: string, opts: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { 'service-version': '2026-03-01', ...opts.headers };
    // An empty value leaves the header out.
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
    if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? admin}`;
    let payload: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + url, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    const text = await res.text();
    const sent: Sent = { method, url, status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    check(sent);
    return sent as Sent & { body: any };
  };

  // 1. The demo's lines, as printed.
  for (const line of d.examples.filter((l) => l.startsWith('curl '))) {
    const r = curlRequest(line);
    const res = await fetch(r.url, { method: r.method, headers: r.headers, ...(r.body === undefined ? {} : { body: r.body }) });
    const text = await res.text();
    check({ method: r.method, url: r.url.slice(base.length), status: res.status, body: JSON.parse(text) as unknown });
  }

  // 2. Every listing, a page further on, and each first item retrieved; unknown ids → 404.
  const first: Record<string, string> = {};
  const listings = [
    'accounts',
    'contacts',
    'opportunities',
    'notes',
    'tasks',
    'meetings',
    'emails',
    'files',
    'members',
    'lists',
    'objects/project',
    'channels',
  ];
  for (const plural of listings) {
    const page = await send('GET', `/v1/${plural}?limit=2`);
    await send('GET', `/v1/${plural}?limit=1&offset=1`);
    const id = page.body?.data?.[0]?.id as string | undefined;
    if (id) first[plural] = id;
    const item = plural === 'objects/project' ? 'objects/project/values' : plural;
    if (id) await send('GET', `/v1/${item}/${id}`);
    await send('GET', `/v1/${item}/${id ? id.replace(/.{4}$/, 'zzzz') : 'nope'}`);
  }
  await send('GET', '/v1/objects');
  await send('GET', '/v1/objects/nosuchtype');
  await send('GET', '/v1/objects/nosuchtype/definitions');
  for (const t of ['accounts', 'contacts', 'opportunities', 'tasks', 'notes', 'meetings', 'objects/project']) await send('GET', `/v1/${t}/definitions`);
  for (const l of (await send('GET', '/v1/lists?limit=25')).body.data as Array<{ id: string; fields: { $objectType: { value: string } } }>) {
    const kind = { account: 'accounts', contact: 'contacts', opportunity: 'opportunities' }[l.fields.$objectType.value];
    if (kind) await send('GET', `/v1/lists/${l.id}/${kind}?limit=2`);
  }
  await send('GET', `/v1/lists/${first.lists}/contacts`.replace(/.{4}\/contacts$/, 'zzzz/contacts'));
  await send('GET', '/v1/auth/validate');
  // What other callers see: the member's and the workspace key's view of meetings and mail
  // (METADATA access leaves content out), and the read-only key's validation.
  for (const key of [d.keys.member?.secret, d.keys.workspace?.secret, readOnly] as string[]) {
    await send('GET', '/v1/auth/validate', { key });
    for (const plural of ['meetings', 'emails', 'notes', 'tasks', 'channels']) {
      const page = await send('GET', `/v1/${plural}?limit=25`, { key });
      for (const item of (page.body?.data ?? []) as Array<{ id: string }>) await send('GET', `/v1/${plural}/${item.id}`, { key });
    }
  }

  // 3. Writes of every kind: create, update, with the usual refusals.
  const globex = d.ids.account?.['a-globex'] as string;
  const ann = d.ids.user?.['u-ann'] as string;
  const acc = await send('POST', '/v1/accounts', {
    body: { fields: { $name: 'Vandelay Industries', $website: ['https://vandelay.example'], $industry: ['Manufacturing'] } },
  });
  const full = await send('POST', '/v1/accounts', { body: { fields: { $name: 'Every type', ...Object.fromEntries(CUSTOM.map(([k, , v]) => [k, v])) } } });
  await send('GET', `/v1/accounts/${full.body.id}`);
  await send('POST', `/v1/accounts/${full.body.id}`, { body: { fields: Object.fromEntries(CUSTOM.map(([k]) => [k, null])) } });
  await send('POST', `/v1/accounts/${full.body.id}`, { body: { fields: Object.fromEntries(CUSTOM.map(([k, , v]) => [k, v])) } });
  await send('GET', '/v1/accounts?c_number[lessThan]=0&c_checkbox=true&c_single=Gold&c_email[contains]=vandelay');
  await send('GET', '/v1/accounts/definitions');
  await send('POST', `/v1/accounts/${acc.body.id}`, {
    body: { fields: { $primaryAddress: { city: 'New York', country: 'us' } }, relationships: { $owner: { replace: ann } } },
  });
  const con = await send('POST', '/v1/contacts', {
    body: { fields: { $name: { firstName: 'Art', lastName: 'Vandelay' }, $email: ['art@vandelay.example'] }, relationships: { $account: acc.body.id } },
  });
  await send('POST', `/v1/contacts/${con.body.id}`, { body: { fields: { $profilePhotoUrl: 'https://vandelay.example/art.png' } } });
  const opp = await send('POST', '/v1/opportunities', {
    body: { fields: { $name: 'Latex imports', $stage: 'Lead' }, relationships: { $account: acc.body.id, $champion: con.body.id } },
  });
  await send('POST', `/v1/opportunities/${opp.body.id}`, { body: { fields: { $stage: 'Proposal' } } });
  const note = await send('POST', '/v1/notes', { body: { fields: { $title: 'Intro', $content: 'Met Art.' }, relationships: { $account: acc.body.id } } });
  await send('POST', `/v1/notes/${note.body.id}`, { body: { relationships: { $opportunity: { add: opp.body.id } } } });
  const noteUrl = `/v1/notes/${note.body.id}`;
  await send('POST', noteUrl, { body: { relationships: { $contact: { add: con.body.id }, $account: { add: [globex], remove: [acc.body.id] } } } });
  await send('POST', noteUrl, { body: { relationships: { $contact: { add: [con.body.id], remove: [con.body.id] } } } });
  await send('GET', `/v1/contacts/${con.body.id}`);
  const task = await send('POST', '/v1/tasks', { body: { fields: { $title: 'Follow up', $status: 'TODO' }, relationships: { $assignedTo: ann } } });
  await send('POST', `/v1/tasks/${task.body.id}`, { body: { fields: { $status: 'COMPLETE' } } });
  const rec = await send('POST', '/v1/objects/project/values', { body: { fields: { name: 'Imports', budget: 12.5 }, relationships: { client: acc.body.id } } });
  await send('POST', `/v1/objects/project/values/${rec.body.id}`, { body: { fields: { budget: null } } });
  const list = await send('POST', '/v1/lists', {
    body: { fields: { $name: 'Importers', $objectType: 'account' }, relationships: { $accounts: [acc.body.id] } },
  });
  await send('POST', `/v1/lists/${list.body.id}`, { body: { relationships: { $accounts: { add: [globex] } } } });
  const start = new Date(Date.now() - 7_200_000).toISOString();
  const mtg = await send('POST', '/v1/meetings', {
    body: { fields: { $title: 'Kickoff', $startDate: start, $endDate: new Date(Date.now() - 3_600_000).toISOString() } },
  });
  await send('POST', `/v1/meetings/${mtg.body.id}`, { body: { fields: { $privacySetting: 'METADATA' } } });
  await send('POST', `/v1/meetings/${mtg.body.id}`, { body: { fields: { $title: 'Kickoff (moved)' } } });
  const attendees = ['jerry@kramerica.example', 'elaine@kramerica.example', 'newman@gmail.com'];
  const auto = await send('POST', '/v1/meetings', {
    body: { fields: { $title: 'Pitch', $startDate: start, $endDate: start, $attendeeEmails: attendees }, autoCreateRecords: true },
  });
  for (const id of auto.body.relationships.$account.values as string[]) await send('GET', `/v1/accounts/${id}`);
  const mail = { from: 'ann@acme.test', to: ['art@vandelay.example'], subject: 'Hello', messageBody: { contentType: 'TEXT', content: 'Hi Art' } };
  await send('POST', '/v1/emails/draft', { body: mail });
  await send('POST', '/v1/emails/send', { body: mail });
  await send('POST', '/v1/emails/send', { body: { ...mail, cc: ['jerry@kramerica.example'], bcc: ['elaine@kramerica.example'] } });
  const crowd = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}@vandelay.example`);
  await send('POST', '/v1/emails/send', { body: { ...mail, to: crowd(250, 't'), cc: crowd(250, 'c'), bcc: ['one-too-many@vandelay.example'] } });
  const bytes = Buffer.from('hello\n');
  const file = await send('POST', '/v1/files', { body: { filename: 'hello.txt', mimeType: 'text/plain', sizeBytes: bytes.length } });
  // The server was built before its port was known: its public URL is a placeholder.
  const upload = new URL(file.body.uploadUrl as string);
  await fetch(base + upload.pathname + upload.search, { method: 'PUT', headers: file.body.uploadHeaders as Record<string, string>, body: bytes });
  await send('POST', `/v1/files/${file.body.id}/complete`, { body: { md5: createHash('md5').update(bytes).digest('hex') } });
  await send('GET', `/v1/files/${file.body.id}`);
  await send('GET', `/v1/files/${file.body.id}/url`);
  const other = await send('POST', '/v1/files', { body: { filename: 'later.txt', mimeType: 'text/plain', sizeBytes: 5 } });
  await send('GET', `/v1/files/${other.body.id}/url`);
  await send('POST', `/v1/files/${other.body.id}/complete`, { body: {} });
  await send('POST', `/v1/files/${other.body.id}/cancel`, { body: {} });

  // 4. The usual errors on each kind of operation.
  for (const [path, body] of [
    ['/v1/accounts', { fields: { $name: 'X', colour: 'red' } }],
    ['/v1/contacts', { fields: { $email: 'not-a-list' } }],
    ['/v1/opportunities', { fields: { $name: 'X' } }],
    ['/v1/notes', { fields: { $title: 1 } }],
    ['/v1/tasks', { fields: { $title: 'X', $status: 'LATER' }, relationships: { $assignedTo: ann } }],
    ['/v1/objects/project/values', { fields: { budget: 'lots' } }],
    ['/v1/lists', { fields: { $name: 'X' } }],
    ['/v1/meetings', { fields: { $title: 'X' } }],
    ['/v1/emails/send', { from: 'ann@acme.test' }],
    ['/v1/files', { filename: 'x' }],
  ] as const) {
    await send('POST', path, { body });
    await send('POST', path, { body, key: readOnly });
  }
  await send('POST', `/v1/accounts/${acc.body.id}`, { body: { relationships: { $owner: { replace: 'usr_0000000000zzzzzzzzzzzzzz' } } } });
  await send('POST', `/v1/contacts/${con.body.id.replace(/.{4}$/, 'zzzz')}`, { body: { fields: {} } });
  await send('POST', '/v1/accounts', { raw: 'name=x', headers: { 'content-type': 'text/plain' } });
  await send('POST', '/v1/notes', { body: { fields: { $title: 'Long', $content: 'x'.repeat(1_100_000) } } });
  await send('POST', '/v1/accounts', { raw: '{"fields":', headers: { 'content-type': 'application/json' } });
  for (const q of ['$name[contains]=x', 'colour=red', '$name[startsWith]=', 'limit=0', 'offset=-1', 'sort=name']) await send('GET', `/v1/accounts?${q}`);
  await send('GET', '/v1/objects/project?budget[greaterThan]=lots');
  await send('GET', '/v1/contacts', { key: null });
  await send('GET', '/v1/contacts', { key: 'rdx_not_a_key' });
  await send('GET', '/v1/contacts', { headers: { 'service-version': '1999-01-01' } });
  // What the original's SDKs send: Lightfield-Version alone.
  await send('GET', '/v1/channels', { headers: { 'service-version': '', 'lightfield-version': '2026-03-01' } });
  await send('GET', '/v1/contacts', { headers: { 'service-version': '', 'lightfield-version': '1999-01-01' } });
  await send('POST', '/v1/notes', { body: { fields: { $title: 'Read-only key' } }, key: readOnly });
  const idem = { 'idempotency-key': 'conformance-1' };
  await send('POST', '/v1/accounts', { body: { fields: { $name: 'Once' } }, headers: idem });
  await send('POST', '/v1/accounts', { body: { fields: { $name: 'Once' } }, headers: idem });
  await send('POST', '/v1/accounts', { body: { fields: { $name: 'Twice' } }, headers: idem });
}
