// The tables the matrices are driven by. Each is checked against the served OpenAPI document: an
// operation without a row makes a test fail, so a new route cannot slip past the matrices.
import type { Scope } from '../../src/auth/scopes.ts';
import { type IdKind, newId } from '../../src/lib/ids.ts';
import { call, type TestApp } from '../helpers/app.ts';
import type { Canary } from '../helpers/canary.ts';
import type { Operation } from '../helpers/openapi-ops.ts';

/** The spec's "Endpoints" section, operation → scopes, written out independently of the routes. */
export const SCOPE_TABLE: Record<string, readonly Scope[]> = {
  validateCredential: [],
  createList: ['lists:create'],
  updateList: ['lists:update'],
  getList: ['lists:read'],
  listLists: ['lists:read'],
  listListAccounts: ['lists:read', 'accounts:read'],
  listListContacts: ['lists:read', 'contacts:read'],
  listListOpportunities: ['lists:read', 'opportunities:read'],
  getMessage: ['messages:read'],
  listMessages: ['messages:read'],
  createFile: ['files:create'],
  completeFile: ['files:create'],
  cancelFile: ['files:create'],
  getFile: ['files:read'],
  listFiles: ['files:read'],
  getFileUrl: ['files:read'],
  getMember: ['members:read'],
  listMembers: ['members:read'],
  createAccount: ['accounts:create'],
  updateAccount: ['accounts:update'],
  getAccount: ['accounts:read'],
  listAccounts: ['accounts:read'],
  getAccountDefinitions: ['accounts:read'],
  createContact: ['contacts:create'],
  updateContact: ['contacts:update'],
  getContact: ['contacts:read'],
  listContacts: ['contacts:read'],
  getContactDefinitions: ['contacts:read'],
  createOpportunity: ['opportunities:create'],
  updateOpportunity: ['opportunities:update'],
  getOpportunity: ['opportunities:read'],
  listOpportunities: ['opportunities:read'],
  getOpportunityDefinitions: ['opportunities:read'],
  createMeeting: ['meetings:create'],
  updateMeeting: ['meetings:update'],
  getMeeting: ['meetings:read'],
  listMeetings: ['meetings:read'],
  sendEmail: ['emails:create'],
  draftEmail: ['emails:create'],
  getEmail: ['emails:read'],
  listEmails: ['emails:read'],
  createNote: ['notes:create'],
  updateNote: ['notes:update'],
  getNote: ['notes:read'],
  listNotes: ['notes:read'],
  createTask: ['tasks:create'],
  updateTask: ['tasks:update'],
  getTask: ['tasks:read'],
  listTasks: ['tasks:read'],
  getTaskDefinitions: ['tasks:read'],
  listObjectTypes: ['custom_objects:read'],
  listObjectRecords: ['custom_objects:read'],
  getObjectDefinitions: ['custom_objects:read'],
  createObjectRecord: ['custom_objects:create'],
  getObjectRecord: ['custom_objects:read'],
  updateObjectRecord: ['custom_objects:update'],
  getChannel: ['channels:read'],
  listChannels: ['channels:read'],
  getNoteDefinitions: ['notes:read'],
  getMeetingDefinitions: ['meetings:read'],
  deleteAccount: ['accounts:delete'],
  deleteContact: ['contacts:delete'],
  deleteOpportunity: ['opportunities:delete'],
  deleteTask: ['tasks:delete'],
  deleteNote: ['notes:delete'],
  deleteMeeting: ['meetings:delete'],
  deleteList: ['lists:delete'],
  deleteObjectRecord: ['custom_objects:delete'],
  mergeAccounts: ['accounts:update', 'accounts:delete'],
  mergeContacts: ['contacts:update', 'contacts:delete'],
  mergeOpportunities: ['opportunities:update', 'opportunities:delete'],
  mergeObjectValues: ['custom_objects:update', 'custom_objects:delete'],
  // The read scope of the merged type, checked once the merge is found: see OBJECT_SCOPES.
  getMerge: [],
  getAccountFieldHistory: ['accounts:read'],
  getContactFieldHistory: ['contacts:read'],
  getOpportunityFieldHistory: ['opportunities:read'],
  getObjectRecordFieldHistory: ['custom_objects:read'],
  enrichAccount: ['accounts:update'],
  enrichContact: ['contacts:update'],
  // The read scope of the run's record type, checked once the run is found (a key holding neither
  // accounts:read nor contacts:read is refused before the run is looked up): see OBJECT_SCOPES.
  getEnrichmentRun: [],
};

/**
 * Operations that hand out a file's bytes (docs/files.md §Who downloads the bytes), each with the
 * canary's objects whose bytes only its owner may have: the transcript of the canary's private
 * meeting, which the owner organizes, and the file of a message in a restricted channel whose
 * only member is the owner. Every operation that answers a download address has a row.
 */
export const CONTENT_BYTES: Record<string, readonly string[]> = { getFileUrl: ['transcript', 'channelFile'] };

/** The requests of a CONTENT_BYTES operation, one for each of the canary's objects of its row. */
export function contentRequests(op: Operation, c: Canary): Array<{ kind: string; req: HappyRequest }> {
  const kinds = CONTENT_BYTES[op.operationId] ?? [];
  const param = Object.keys(idKinds(op)).at(-1);
  if (kinds.length === 0 || !param) throw new Error(`${op.operationId}: no row in CONTENT_BYTES`);
  return kinds.map((kind) => {
    if (!c.ids[kind]) throw new Error(`${op.operationId}: the canary has no ${kind} for its bytes`);
    return { kind, req: happyRequest(op, c, { [param]: c.ids[kind] }) };
  });
}

/** Operations whose scope depends on the object they name: what the canary's object needs. */
export const OBJECT_SCOPES: Record<string, readonly Scope[]> = {
  // The canary's run is on its account, and its merge merged two accounts.
  getEnrichmentRun: ['accounts:read'],
  getMerge: ['accounts:read'],
};

/** The path segment before an id parameter names the kind of the id. */
const KIND_BY_SEGMENT: Record<string, string> = {
  lists: 'list',
  messages: 'message',
  files: 'file',
  members: 'user',
  channels: 'channel',
  accounts: 'account',
  contacts: 'contact',
  opportunities: 'opportunity',
  meetings: 'meeting',
  emails: 'email',
  notes: 'note',
  tasks: 'task',
  objects: 'objectType',
  values: 'customRecord',
  merges: 'merge',
  fields: 'fieldKey',
  enrichmentRun: 'enrichmentRun',
};

/** Path parameters that name no object of a workspace (the same in every workspace): not ids. */
export const NOT_IDS = new Set(['fieldKey']);

/** The field whose history the happy request reads. */
const FIELD_KEY_FOR: Record<string, string> = { getObjectRecordFieldHistory: 'name' };

export const ID_PREFIX: Record<string, string> = {
  list: 'lst',
  message: 'msg',
  file: 'fil',
  user: 'usr',
  channel: 'chn',
  account: 'acc',
  contact: 'con',
  opportunity: 'opp',
  meeting: 'mtg',
  transcript: 'fil',
  channelFile: 'fil',
  email: 'eml',
  mailbox: 'mbx',
  note: 'nte',
  task: 'tsk',
  customRecord: 'rec',
  merge: 'mrg',
  enrichmentRun: 'enr',
};

/** param name → kind of object it names, for every path parameter of the operation. */
export function idKinds(op: Operation): Record<string, string> {
  const out: Record<string, string> = {};
  const parts = op.path.split('/');
  parts.forEach((part, i) => {
    const m = /^\{(\w+)\}$/.exec(part);
    if (!m) return;
    const kind = KIND_BY_SEGMENT[parts[i - 1] ?? ''];
    if (!kind) throw new Error(`${op.operationId}: no kind known for the path parameter {${m[1]}} after "${parts[i - 1]}"; add it to KIND_BY_SEGMENT`);
    out[m[1]!] = kind;
  });
  return out;
}

/** Bodies of the write operations that succeed on the canary's own objects. */
export const BODIES: Record<string, (c: Canary) => unknown> = {
  createList: (c) => ({ fields: { $name: `made ${c.tag}`, $objectType: 'contact' }, relationships: { $contacts: [c.ids.contact] } }),
  updateList: (c) => ({ fields: { $name: `renamed ${c.tag}` }, relationships: { $contacts: { add: [c.ids.contact] } } }),
  createFile: (c) => ({ filename: `new-${c.tag}.txt`, mimeType: 'text/plain', sizeBytes: 3 }),
  completeFile: () => ({}),
  deleteAccount: () => ({}),
  deleteContact: () => ({}),
  deleteOpportunity: () => ({}),
  deleteTask: () => ({}),
  deleteNote: () => ({}),
  deleteMeeting: () => ({}),
  deleteList: () => ({}),
  deleteObjectRecord: () => ({}),
  mergeAccounts: (c) => ({ primaryId: c.ids.account, duplicateId: c.ids.mergeAccount }),
  mergeContacts: (c) => ({ primaryId: c.ids.contact, duplicateId: c.ids.mergeContact }),
  mergeOpportunities: (c) => ({ primaryId: c.ids.opportunity, duplicateId: c.ids.mergeOpportunity }),
  mergeObjectValues: (c) => ({ primaryId: c.ids.customRecord, duplicateId: c.ids.mergeCustomRecord }),
  cancelFile: () => ({}),
  createAccount: (c) => ({ fields: { $name: `made ${c.tag}`, $industry: ['Software'] }, relationships: { $contact: [c.ids.contact] } }),
  updateAccount: (c) => ({ fields: { $name: `renamed ${c.tag}`, $primaryAddress: { city: 'Berlin' } }, relationships: { $contact: { add: [c.ids.contact] } } }),
  createContact: (c) => ({ fields: { $name: { firstName: 'New', lastName: c.tag } }, relationships: { $account: [c.ids.account] } }),
  updateContact: (c) => ({ fields: { $email: [`new-${c.tag.toLowerCase()}@canary.test`] }, relationships: { $account: { add: c.ids.account } } }),
  createOpportunity: (c) => ({ fields: { $name: `made ${c.tag}`, $stage: 'Lead' }, relationships: { $account: c.ids.account } }),
  updateOpportunity: (c) => ({ fields: { $name: `renamed ${c.tag}` }, relationships: { $account: { replace: c.ids.account } } }),
  createMeeting: (c) => ({
    fields: { $title: `Meeting ${c.tag}`, $startDate: '2026-01-05T10:00:00Z', $endDate: '2026-01-05T11:00:00Z', $description: `made ${c.tag}` },
    relationships: { $transcript: c.ids.transcript },
  }),
  updateMeeting: (c) => ({ fields: { $privacySetting: 'FULL' }, relationships: { $transcript: { replace: c.ids.transcript } } }),
  sendEmail: (c) => ({
    from: c.mailbox,
    to: [`to-${c.tag.toLowerCase()}@canary.test`],
    subject: `sent ${c.tag}`,
    messageBody: { contentType: 'TEXT', content: `body ${c.tag}` },
    attachments: [c.ids.file],
  }),
  draftEmail: (c) => ({ from: c.mailbox, subject: `draft ${c.tag}`, messageBody: { content: `<p>draft ${c.tag}</p>` }, attachments: [c.ids.file] }),
  createNote: (c) => ({
    fields: { $title: `made ${c.tag}`, $content: 'body' },
    relationships: { $account: [c.ids.account], $opportunity: c.ids.opportunity, $contact: [c.ids.contact] },
  }),
  updateNote: (c) => ({
    fields: { $title: `renamed ${c.tag}` },
    relationships: { $account: { add: [c.ids.account] }, $contact: { add: c.ids.contact, remove: [] } },
  }),
  createTask: (c) => ({ fields: { $title: `made ${c.tag}`, $status: 'TODO' }, relationships: { $assignedTo: c.userId, $account: c.ids.account } }),
  createObjectRecord: (c) => ({ fields: { name: `made ${c.tag}` }, relationships: { client: c.ids.account } }),
  updateObjectRecord: (c) => ({ fields: { name: `renamed ${c.tag}` }, relationships: { client: { replace: c.ids.account } } }),
  updateTask: (c) => ({ fields: { $status: 'IN_PROGRESS' }, relationships: { $opportunity: { replace: c.ids.opportunity } } }),
  enrichAccount: () => ({ fields: ['$linkedIn'] }),
  enrichContact: () => ({}),
};

/**
 * Operations that act on another object than the kind's canary, named by their last path
 * parameter (cancel needs a PENDING file; a delete takes a spare, so the canary's stay live).
 */
const OBJECT_FOR: Record<string, string> = {
  cancelFile: 'pendingFile',
  deleteAccount: 'spareAccount',
  deleteContact: 'spareContact',
  deleteOpportunity: 'spareOpportunity',
  deleteTask: 'spareTask',
  deleteNote: 'spareNote',
  deleteMeeting: 'spareMeeting',
  deleteList: 'spareList',
  deleteObjectRecord: 'spareCustomRecord',
};

export interface HappyRequest {
  method: Operation['method'];
  url: string;
  params: Record<string, string>;
  body?: unknown;
}

/** The request of `op` that succeeds for the canary's own key and objects. */
export function happyRequest(op: Operation, c: Canary, params: Record<string, string> = {}): HappyRequest {
  const values: Record<string, string> = {};
  const kinds = Object.entries(idKinds(op));
  for (const [name, kind] of kinds) {
    const last = name === kinds[kinds.length - 1]?.[0];
    const id =
      params[name] ?? (kind === 'fieldKey' ? (FIELD_KEY_FOR[op.operationId] ?? '$name') : c.ids[(last ? OBJECT_FOR[op.operationId] : undefined) ?? kind]);
    if (!id) throw new Error(`${op.operationId}: the canary workspace has no ${kind}`);
    values[name] = id;
  }
  const url = op.path.replace(/\{(\w+)\}/g, (_m, n: string) => encodeURIComponent(values[n]!));
  if (!op.body) return { method: op.method, url, params: values };
  const make = BODIES[op.operationId];
  if (!make) throw new Error(`${op.operationId} takes a body but has no row in BODIES (test/adversarial/operations.ts)`);
  return { method: op.method, url, params: values, body: make(c) };
}

export function sendHappy(t: TestApp, secret: string, req: HappyRequest, extra: Record<string, string> = {}) {
  return call(t, secret, req.method, req.url, req.body, extra);
}

/** What the canary's owner sees through every read operation: equal before and after means untouched. */
export async function ownerView(t: TestApp, ops: Operation[], c: Canary): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const op of ops.filter((o) => o.method === 'GET' && o.operationId !== 'getFileUrl')) {
    const res = await sendHappy(t, c.secret, happyRequest(op, c));
    out[op.operationId] = `${res.statusCode} ${res.body.replace(/"requestId":"[^"]+"/g, '')}`;
  }
  return out;
}

/** An id of the right kind and form that no object has. */
export function randomId(kind: string): string {
  return newId((ID_PREFIX[kind] ?? 'obj') as IdKind);
}

/** The tools of /mcp (docs/mcp.md §Tools): test/adversarial/mcp.test.ts drives every operation above through them. */
export const MCP_TOOLS = ['get_current_user', 'search_api_docs', 'get_api_details', 'read_from_rolodex', 'write_to_rolodex'] as const;
export type McpTool = (typeof MCP_TOOLS)[number];

/**
 * What the matrices of test/adversarial/mcp.test.ts send through each tool: the two API tools
 * carry every operation above ('operations'); the three that make no API call, the arguments
 * listed, every operation's details among them. A tool added to MCP_TOOLS needs its row.
 */
export const MCP_TOOL_CALLS: Record<McpTool, 'operations' | ((ops: readonly Operation[]) => Record<string, unknown>[])> = {
  get_current_user: () => [{}],
  search_api_docs: () => [{}, { query: 'list members' }, { query: 'contact account opportunity note task' }, { query: 'canary' }],
  get_api_details: (ops) => ops.map((o) => ({ operationId: o.operationId })),
  read_from_rolodex: 'operations',
  write_to_rolodex: 'operations',
};
