// The import benches' data (bench/import.ts, bench/import-sharing.ts): custom field definitions,
// accounts, then contacts with a full name, 1–3 e-mails, an account and custom values, as NDJSON
// or, for the contacts, as CSV with the same values. Written as a stream (1,000,000 contacts are
// about 400 MB of NDJSON).
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const FIRST = ['Ann', 'Bob', 'Chloé', 'Dmitri', 'Eva', 'Farid', 'Grace', 'Hiro', 'Ines', 'José', 'Kai', 'Lena', 'Mona', 'Nils', 'Olu', 'Priya'];
const LAST = ['Smith', 'Lee', 'García', 'Müller', 'Nguyen', 'Okafor', 'Rossi', 'Sato', 'Kowalski', 'Dubois', 'Haddad', 'Jensen', 'Silva'];
const DOMAINS = ['acme.test', 'globex.test', 'initech.test', 'umbrella.test', 'hooli.test', 'example.org', 'mail.test'];
const TITLES = ['CEO', 'CTO', 'Engineer', 'Sales lead', 'Designer', 'Buyer', 'Analyst', 'Head of Operations'];
const TIERS = ['Gold', 'Silver', 'Bronze'];

/** One account per 50 contacts. */
export const accountsFor = (contacts: number) => Math.max(1, Math.floor(contacts / 50));

interface Contact {
  externalId: string;
  first: string;
  last: string;
  emails: string[];
  title: string;
  score: number;
  phone?: string;
  tier?: string;
  since?: string;
  account: string;
}

function contact(i: number, accounts: number): Contact {
  const first = FIRST[i % FIRST.length] as string;
  const last = LAST[(i * 7) % LAST.length] as string;
  return {
    externalId: `c${i}`,
    first,
    last,
    emails: Array.from({ length: 1 + (i % 3) }, (_, k) => `${first.toLowerCase()}.${i}${k ? `.${k}` : ''}@${DOMAINS[(i + k) % DOMAINS.length]}`),
    title: TITLES[i % TITLES.length] as string,
    score: i % 1000,
    ...(i % 2 === 0 ? { phone: `+1 212 ${200 + (Math.floor(i / 10_000) % 800)} ${String(i % 10_000).padStart(4, '0')}` } : {}),
    ...(i % 3 === 0 ? { tier: TIERS[i % TIERS.length] } : {}),
    ...(i % 4 === 0 ? { since: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString() } : {}),
    account: `a${i % accounts}`,
  };
}

async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(path);
  for (const l of lines) if (!out.write(`${l}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

function* setupLines(contacts: number): Generator<string> {
  const def = (key: string, label: string, valueType: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ object: 'definition', externalId: `d-${key}`, definition: 'field', objectType: 'contact', key, label, valueType, ...extra });
  yield def('title', 'Title', 'TEXT');
  yield def('phone', 'Phone', 'TELEPHONE');
  yield def('score', 'Score', 'NUMBER');
  yield def('tier', 'Tier', 'SINGLE_SELECT', { options: TIERS });
  yield def('since', 'Customer since', 'DATETIME');
  for (let a = 0; a < accountsFor(contacts); a++)
    yield JSON.stringify({ object: 'account', externalId: `a${a}`, fields: { $name: { value: `Company ${a}`, valueType: 'TEXT' } } });
}

function* contactLines(contacts: number): Generator<string> {
  const accounts = accountsFor(contacts);
  for (let i = 0; i < contacts; i++) {
    const c = contact(i, accounts);
    const fields: Record<string, unknown> = {
      $name: { value: { firstName: c.first, lastName: c.last }, valueType: 'FULL_NAME' },
      $email: { value: c.emails, valueType: 'EMAIL' },
      title: { value: c.title, valueType: 'TEXT' },
      score: { value: c.score, valueType: 'NUMBER' },
    };
    if (c.phone) fields.phone = { value: c.phone, valueType: 'TELEPHONE' };
    if (c.tier) fields.tier = { value: c.tier, valueType: 'SINGLE_SELECT' };
    if (c.since) fields.since = { value: c.since, valueType: 'DATETIME' };
    yield JSON.stringify({ object: 'contact', externalId: c.externalId, fields, relationships: { $account: { objectType: 'account', values: [c.account] } } });
  }
}

function* csvLines(contacts: number): Generator<string> {
  const accounts = accountsFor(contacts);
  yield 'externalId,$name.firstName,$name.lastName,$email,title,phone,score,tier,since,$account';
  for (let i = 0; i < contacts; i++) {
    const c = contact(i, accounts);
    yield [c.externalId, c.first, c.last, c.emails.join(';'), c.title, c.phone ?? '', c.score, c.tier ?? '', c.since ?? '', c.account].join(',');
  }
}

/** Definitions, accounts and contacts in one NDJSON file. */
export async function writeNdjson(path: string, contacts: number): Promise<void> {
  await writeLines(
    path,
    (function* () {
      yield* setupLines(contacts);
      yield* contactLines(contacts);
    })(),
  );
}

/** The definitions and accounts alone (NDJSON), for imports whose contacts come in a file of their own. */
export const writeSetup = (path: string, contacts: number) => writeLines(path, setupLines(contacts));

/** The contacts alone, NDJSON or CSV (the same records). */
export const writeContacts = (path: string, contacts: number, format: 'ndjson' | 'csv') =>
  writeLines(path, format === 'csv' ? csvLines(contacts) : contactLines(contacts));
