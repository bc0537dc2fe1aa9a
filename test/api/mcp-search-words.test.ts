// search_api_docs matches whole words (docs/mcp.md §Tools): a word of the query finds that word,
// or its plural, in an operation or a value format, never a part of another word ("date" in
// "update", "name" in "named", "count" in "account"). The catalogue is built from the committed
// docs/openapi.json, which test/ops/openapi.test.ts holds equal to the served document.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { apiCatalogue, holdsWord, STOP_WORDS } from '../../src/mcp/catalogue.ts';
import { OPENAPI_FILE } from '../../src/docs/openapi-document.ts';
import { filterSyntaxText } from '../../src/records/filter/operators.ts';

const catalogue = apiCatalogue(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>);
const search = (query: string) => {
  const r = catalogue.search(query, 200);
  return { ops: r.operations.map((o) => o.operationId), formats: r.valueFormats.map((f): string => f.valueType) };
};

test('a word matches a whole word or its plural, never a part of another word', () => {
  const cases: Array<[string, string, boolean]> = [
    ['list lists', 'list', true],
    ['a $list here', 'list', true],
    ['the listing', 'list', false],
    ['blacklist', 'list', false],
    ['an iso 8601 date-time', 'date', true],
    ['update a list', 'date', false],
    ['list e-mails', 'e-mail', true],
    ['emails', 'email', true],
    ['e-mail addresses', 'address', true],
    ['emailed', 'email', false],
    ["the contact's $email", '$email', true],
    // -es ends a plural only after s, x, z, ch and sh: "notes" is the plural of "note", not of "not".
    ['list notes', 'not', false],
    ['list notes', 'note', true],
    ['mailboxes', 'mailbox', true],
    ['searches', 'search', true],
    ['codes', 'cod', false],
  ];
  for (const [text, word, found] of cases) assert.equal(holdsWord(text, word), found, `"${word}" in "${text}"`);
});

test('search_api_docs finds what the words name, and nothing only a part of another word holds', () => {
  const list = search('list');
  for (const id of ['listLists', 'listContacts', 'listMembers', 'listEmails']) assert.ok(list.ops.includes(id), `list: ${id}`);
  // EMAIL's rule holds the word itself: a multi-valued field takes "one string as a list of one".
  assert.deepEqual(list.formats, ['EMAIL']);

  assert.equal(search('phone number format').formats[0], 'TELEPHONE');

  const address = search('address');
  assert.deepEqual(address.formats, ['ADDRESS', 'EMAIL'], 'the ADDRESS object first, then e-mail addresses');

  const email = search('email');
  assert.deepEqual(email.ops.slice(0, 4).sort(), ['draftEmail', 'getEmail', 'listEmails', 'sendEmail']);
  assert.deepEqual(email.formats, ['EMAIL']);

  // Parts of other words find nothing.
  const date = search('date');
  assert.deepEqual(date.formats, ['DATETIME'], 'date-time');
  for (const id of ['updateAccount', 'updateList', 'validateCredential']) assert.ok(!date.ops.includes(id), `date: ${id}`);
  const name = search('name');
  assert.equal(name.formats[0], 'FULL_NAME');
  for (const type of ['SINGLE_SELECT', 'MULTI_SELECT']) assert.ok(!name.formats.includes(type), `name: ${type} ("named by its id")`);
  const count = search('count');
  assert.ok(!count.ops.some((id) => id.includes('Account')), `count: ${count.ops.join()}`);
  assert.ok(!count.formats.includes('ADDRESS'), 'count: country');
  assert.deepEqual(search('port').ops, [], 'port: opportunity, import, export');
  const not = search('not').ops;
  for (const id of ['createNote', 'getNote', 'updateNote', 'deleteNote']) assert.ok(!not.includes(id), `"not": ${id}, whose notes are no plural of it`);

  assert.equal(search('create contact').ops[0], 'createContact');
  assert.ok(search('list members').ops.slice(0, 2).includes('listMembers'));
});

// Ties were broken by path alone: "list members" answered updateList (both words, one only in its
// summary "…add and remove members") before listMembers. A word of the operationId now weighs more
// than one of the path or summary, which weighs more than one found only in the description.
test('search_api_docs ranks first the operation whose operationId, path and summary hold the words', () => {
  const first: Array<[string, string]> = [
    ['list members', 'listMembers'],
    ['create contact', 'createContact'],
    ['merge accounts', 'mergeAccounts'],
    ['add members to list', 'updateList'],
    ['send email', 'sendEmail'],
    ['get account', 'getAccount'],
    ['record history', 'getObjectRecordFieldHistory'],
    ['validate key', 'validateCredential'],
    ['listMembers', 'listMembers'],
  ];
  for (const [query, id] of first) assert.equal(search(query).ops[0], id, `${query}: ${search(query).ops.slice(0, 4).join(' ')}`);
  // No operation deletes a file: the file's operations come before those that delete another kind,
  // whose operationId holds "delete" but whose path holds no file.
  const file = search('delete file').ops;
  assert.deepEqual(file.slice(0, 6).sort(), ['cancelFile', 'completeFile', 'createFile', 'getFile', 'getFileUrl', 'listFiles'], file.join(' '));
  // A word of the summary ("Validate the API key") outweighs one found only in a description (the
  // "Idempotency-Key" of every write), which came first by its path.
  assert.equal(search('key').ops[0], 'validateCredential');
});

// Every word of the query counted, "how", "do", "the", "of" and "a" as much as "members": a
// question matched every value format (each rule holds "a" or "the") and 72 operations. The stop
// words are dropped when the query holds another word, kept when it holds nothing else.
test('search_api_docs drops the stop words of a query that holds other words', () => {
  const question = search('how do I list the members of a list');
  assert.equal(question.ops[0], 'listMembers');
  assert.deepEqual(question, search('list members'), 'the question finds what its words "list members" find');
  assert.deepEqual(question.formats, ['ADDRESS', 'EMAIL'], 'only the rules that hold "members" or "list"');
  assert.deepEqual(search('how do I send an email'), search('send email'));
  assert.ok(search('a').ops.length > 0, 'a query of stop words alone searches them');
  const listed = /English filler \(([^)]*)\)/.exec(readFileSync('docs/mcp.md', 'utf8').replace(/\s+/g, ' '))?.[1];
  assert.deepEqual(listed?.split(', '), [...STOP_WORDS], 'docs/mcp.md §Search words lists the stop words');
});

// Every filterable listing's description repeats the filter syntax (src/records/filter/operators.ts),
// which names keys, values, options, labels, e-mails, addresses, numbers and relationships: a word
// found there ranked the six listings before the operations whose own words hold it ("key" gave
// listAccounts before every write naming Idempotency-Key, "address key" before getFileUrl). Ranking
// by the place of one word then put an operation naming one word before those holding them all:
// "idempotency key" gave validateCredential ("Validate the API key") before every write, whose
// description says "Honours `Idempotency-Key`". The oracle: more of the query's words in the
// operation's own text first; among as many, one in the operationId, path or summary first.
test('search_api_docs ranks more of the words first, then the words an operation names, and the shared filter syntax last', () => {
  const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const syntax = filterSyntaxText().toLowerCase();
  const where = new Map<string, { named: string; own: string }>();
  const idempotent: string[] = [];
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, spec] of Object.entries(item)) {
      const id = String(spec.operationId);
      const named = `${id} ${id.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')} ${path} ${String(spec.summary)}`.toLowerCase();
      const tags = Array.isArray(spec.tags) ? spec.tags.join(' ') : '';
      const description = String(spec.description).toLowerCase();
      where.set(id, { named, own: `${named} ${method} ${tags.toLowerCase()} ${description.replace(syntax, '')}` });
      if (description.includes('idempotency-key')) idempotent.push(id);
    }
  // [words of the query the own text holds, 1 when one of them is named]: best first is descending.
  const rank = (id: string, words: string[]): [number, number] => {
    const w = where.get(id)!;
    return [words.filter((x) => holdsWord(w.own, x)).length, words.some((x) => holdsWord(w.named, x)) ? 1 : 0];
  };
  for (const query of [
    'key',
    'idempotency key',
    'address key',
    'email key',
    'email address',
    'custom field',
    'custom contact',
    'field value',
    'number',
    'filter',
    'list members',
    'get account',
    'delete file',
  ]) {
    const ops = search(query).ops;
    const ranks = ops.map((id) => rank(id, query.split(' ')));
    const sorted = [...ranks].sort((a, b) => b[0] - a[0] || b[1] - a[1]);
    assert.deepEqual(ranks, sorted, `${query}: ${ops.map((id, i) => `${id}:${ranks[i]!.join('/')}`).join(' ')}`);
  }
  // Every write says both words, validateCredential only "key": the writes come first, then it.
  const key = search('idempotency key').ops;
  assert.ok(idempotent.length > 0);
  assert.deepEqual(key.slice(0, idempotent.length).sort(), [...idempotent].sort(), key.join(' '));
  assert.equal(key[idempotent.length], 'validateCredential', key.join(' '));
  assert.deepEqual(search('email address').ops.slice(4, 5), ['getFileUrl'], 'its own words say "address", the listings only the syntax');
  // No operation is about numbers: "number" finds the listings, which take NUMBER filters, and the format.
  assert.deepEqual(search('number').ops.sort(), ['listAccounts', 'listContacts', 'listNotes', 'listObjectRecords', 'listOpportunities', 'listTasks']);
  assert.equal(search('number').formats[0], 'NUMBER');
  assert.equal(search('phone number').formats[0], 'TELEPHONE');
});
