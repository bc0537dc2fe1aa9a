// The writes the crash test runs against a real server until it is killed, and what it was told
// (acknowledged) along the way. Each step of a client is one request; only a 2xx answer counts as
// acknowledged, anything cut off by the kill is "in flight".
import { createHash } from 'node:crypto';

export interface Acked {
  /** Acknowledged state of each list, and the state its unacknowledged update would give. */
  lists: Map<string, ListState & { next?: ListState }>;
  /** Idempotency keys sent whose answer never came. */
  inFlight: Array<{ key: string; name: string }>;
  files: Map<string, { id: string; size: number; md5: string }>;
  requests: number;
  /** Lists acknowledged or updated since the last kill: checked through the API after the restart. */
  touched: Set<string>;
}

export interface ListState {
  id: string;
  name: string;
  members: Set<string>;
}

export interface Workload {
  baseUrl: string;
  secret: string;
  contacts: string[];
  files: boolean;
  /** Deterministic choices: a seeded generator. */
  rand: () => number;
  point: number;
}

const VERSION = '2026-03-01';

async function post(w: Workload, path: string, body: unknown, key?: string) {
  const res = await fetch(`${w.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${w.secret}`,
      'service-version': VERSION,
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

function pick(w: Workload, n: number): string[] {
  const out = new Set<string>();
  while (out.size < n) out.add(w.contacts[Math.floor(w.rand() * w.contacts.length)]!);
  return [...out];
}

async function client(w: Workload, c: number, acked: Acked, stop: { now: boolean }): Promise<void> {
  for (let i = 0; !stop.now; i++) {
    const name = `crash-${w.point}-${c}-${i}`;
    const key = `key-${name}`;
    const members = pick(w, 3);
    acked.inFlight.push({ key, name });
    acked.requests++;
    const created = await post(w, '/v1/lists', { fields: { $name: name, $objectType: 'contact' }, relationships: { $contacts: members } }, key);
    if (created.status !== 200) throw new Error(`create: ${created.status} ${JSON.stringify(created.json)}`);
    acked.inFlight.pop();
    const list = { id: created.json.id as string, name, members: new Set(members) };
    acked.lists.set(list.id, list);
    acked.touched.add(list.id);
    const add = pick(w, 2);
    acked.lists.set(list.id, { ...list, next: { id: list.id, name: `${name}-u`, members: new Set([...members, ...add]) } });
    acked.requests++;
    const updated = await post(w, `/v1/lists/${list.id}`, { fields: { $name: `${name}-u` }, relationships: { $contacts: { add } } }, `${key}-u`);
    if (updated.status !== 200) throw new Error(`update: ${updated.status}`);
    acked.lists.set(list.id, { id: list.id, name: `${name}-u`, members: new Set([...members, ...add]) });
    if (w.files) await fileRound(w, name, acked);
  }
}

async function fileRound(w: Workload, name: string, acked: Acked): Promise<void> {
  const bytes = Buffer.alloc(20_000 + Math.floor(w.rand() * 200_000), name);
  const md5 = createHash('md5').update(bytes).digest('hex');
  acked.requests++;
  const created = await post(w, '/v1/files', { filename: `${name}.bin`, mimeType: 'application/octet-stream', sizeBytes: bytes.length }, `file-${name}`);
  if (created.status !== 200) throw new Error(`createFile: ${created.status} ${JSON.stringify(created.json)}`);
  acked.requests++;
  // The upload URL names the configured public address; the bytes go to the live server.
  const put = await fetch(`${w.baseUrl}${new URL(created.json.uploadUrl).pathname}`, { method: 'PUT', headers: created.json.uploadHeaders, body: bytes });
  if (put.status !== 200) throw new Error(`PUT: ${put.status}`);
  acked.requests++;
  const done = await post(w, `/v1/files/${created.json.id}/complete`, { md5 }, `complete-${name}`);
  if (done.status !== 200) throw new Error(`complete: ${done.status} ${JSON.stringify(done.json)}`);
  acked.files.set(created.json.id, { id: created.json.id, size: bytes.length, md5 });
}

/** Runs `clients` loops until `stop.now`; a loop cut off by the kill ends quietly. */
export async function runWorkload(w: Workload, clients: number, acked: Acked, stop: { now: boolean }): Promise<void> {
  await Promise.all(
    Array.from({ length: clients }, (_, c) =>
      client(w, c, acked, stop).catch((err: Error) => {
        // After the kill, a refused connection is expected; before it, any failure is a finding.
        if (!stop.now) throw err;
      }),
    ),
  );
}

/** mulberry32: small, seeded, good enough to choose kill points reproducibly. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
