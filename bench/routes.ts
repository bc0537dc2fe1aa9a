// The routes the benchmark measures, one entry each. `seed` prepares what a route needs in the
// freshly migrated database before the server starts (and may keep ids in `ctx.state`); `path`
// and `body` then build the request. Add a route by adding an entry here.
import type { Db } from '../src/db/types.ts';
import { TASK_STATUSES } from '../src/definitions/catalogue.ts';
import { seedBigList, seedContact, seedContacts, seedList, seedLists, seedMessages, seedTasks } from './seeds.ts';

export interface BenchContext {
  db: Db;
  workspaceId: string;
  userId: string;
  /** A full-access API key of the workspace. */
  secret: string;
  /** Whatever a route's seed wants to keep for its requests (e.g. the id of a seeded list). */
  state: Record<string, unknown>;
}

export interface BenchRoute {
  name: string;
  method: 'GET' | 'POST';
  path(ctx: BenchContext): string;
  /** When given, the requests take these paths in turn instead of `path` (reads of many rows). */
  paths?(ctx: BenchContext): string[];
  body?(ctx: BenchContext): unknown;
  /** When given, the i-th request's body instead of `body` (updates that each change something). */
  bodies?(ctx: BenchContext): (i: number) => unknown;
  /** Extra headers (e.g. Idempotency-Key: none by default, so every POST creates). */
  headers?: Record<string, string>;
  seed?(ctx: BenchContext): Promise<void>;
}

/** Loads started with a route's `bodies`: each load's names differ from every earlier one's. */
let loads = 0;

export const ROUTES: BenchRoute[] = [
  { name: 'GET /v1/auth/validate', method: 'GET', path: () => '/v1/auth/validate' },
  { name: 'GET /v1/lists/{id}', method: 'GET', seed: seedList, path: (c) => `/v1/lists/${String(c.state.listId)}` },
  {
    name: 'GET /v1/lists/{id}, 1,000 lists in turn',
    method: 'GET',
    seed: (c) => seedLists(c, 1000),
    path: (c) => `/v1/lists/${(c.state.listIds as string[])[0]}`,
    paths: (c) => (c.state.listIds as string[]).map((id) => `/v1/lists/${id}`),
  },
  {
    name: 'member page, 100,000-member list (middle)',
    method: 'GET',
    seed: (c) => seedBigList(c),
    path: (c) => `/v1/lists/${String(c.state.bigListId)}/contacts?limit=25&offset=${Math.floor(Number(c.state.bigListMembers) / 2)}`,
  },
  { name: 'GET /v1/messages', method: 'GET', seed: (c) => seedMessages(c), path: () => '/v1/messages' },
  {
    name: 'POST /v1/lists',
    method: 'POST',
    path: () => '/v1/lists',
    body: () => ({ fields: { $name: 'Bench', $objectType: 'account' } }),
  },
  { name: 'GET /v1/contacts/{id}', method: 'GET', seed: seedContact, path: (c) => `/v1/contacts/${String(c.state.contactId)}` },
  {
    name: 'GET /v1/contacts/{id}, 1,000 contacts in turn',
    method: 'GET',
    seed: (c) => seedContacts(c, 1000),
    path: (c) => `/v1/contacts/${(c.state.contactIds as string[])[0]}`,
    paths: (c) => (c.state.contactIds as string[]).map((id) => `/v1/contacts/${id}`),
  },
  {
    name: 'POST /v1/contacts',
    method: 'POST',
    path: () => '/v1/contacts',
    body: () => ({ fields: { $name: { firstName: 'Bench', lastName: 'Create' }, $email: ['create@bench.test'] } }),
  },
  {
    name: 'POST /v1/contacts/{id}, 1,000 contacts in turn',
    method: 'POST',
    seed: (c) => seedContacts(c, 1000),
    path: (c) => `/v1/contacts/${(c.state.contactIds as string[])[0]}`,
    paths: (c) => (c.state.contactIds as string[]).map((id) => `/v1/contacts/${id}`),
    // A name each request has not set before: every update changes the contact.
    bodies: () => {
      const run = `${Date.now().toString(36)}.${++loads}`;
      return (i) => ({ fields: { $name: { firstName: 'Bench', lastName: `Update ${run}.${i}` } } });
    },
  },
  {
    name: 'POST /v1/tasks',
    method: 'POST',
    path: () => '/v1/tasks',
    body: (c) => ({ fields: { $title: 'Bench task', $status: 'TODO' }, relationships: { $assignedTo: c.userId } }),
  },
  {
    name: 'POST /v1/tasks/{id}, 1,000 tasks in turn',
    method: 'POST',
    seed: (c) => seedTasks(c, 1000),
    path: (c) => `/v1/tasks/${(c.state.taskIds as string[])[0]}`,
    paths: (c) => (c.state.taskIds as string[]).map((id) => `/v1/tasks/${id}`),
    // A new title and the next status: each update moves its task from one status's ranked set to another's.
    bodies: () => {
      const run = `${Date.now().toString(36)}.${++loads}`;
      return (i) => ({ fields: { $title: `Update ${run}.${i}`, $status: TASK_STATUSES[(loads + Math.floor(i / 1000) + (i % 1000)) % 4] } });
    },
  },
  {
    name: 'GET /v1/tasks?$status[-equal]=TODO, first page of 2,000 tasks',
    method: 'GET',
    seed: (c) => seedTasks(c, 2000),
    path: () => '/v1/tasks?$status[-equal]=TODO&limit=25',
  },
  {
    name: 'GET /v1/tasks?$status[-equal]=TODO, middle of 2,000 tasks',
    method: 'GET',
    seed: (c) => seedTasks(c, 2000),
    path: () => '/v1/tasks?$status[-equal]=TODO&limit=25&offset=750',
  },
  { name: 'GET /v1/contacts', method: 'GET', path: () => '/v1/contacts' },
  {
    name: 'GET /v1/contacts, 25 at offset 500 of 1,000',
    method: 'GET',
    seed: (c) => seedContacts(c, 1000),
    path: () => '/v1/contacts?limit=25&offset=500',
  },
];
