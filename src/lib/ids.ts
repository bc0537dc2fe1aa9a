// Ids are opaque to clients, prefixed by kind and time-sortable: 10 characters of millisecond
// timestamp then 16 characters drawn at random (growing within a millisecond, below), in Crockford
// base32 (a ULID without the dash-free ambiguity of case: always lower case). Sorting ids as
// strings sorts them by creation time.
import { createHash, randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdKind =
  | 'req'
  | 'ws'
  | 'usr'
  | 'key'
  | 'lst'
  | 'acc'
  | 'con'
  | 'opp'
  | 'msg'
  | 'chn'
  | 'fil'
  | 'kn'
  | 'fld'
  | 'rld'
  | 'opt'
  | 'tsk'
  | 'nte'
  | 'mtg'
  | 'eml'
  | 'rec'
  | 'mbx'
  | 'mrg'
  | 'evt'
  | 'whk'
  | 'enr';

/** The low `5 × chars` bits of `v` (an integer below 2^53) as `chars` characters, most significant first. */
function encode(v: number, chars: number): string {
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
}

const encodeTime = (ms: number) => encode(ms, 10);

// Every request gets an id, so random bytes are drawn from a pool refilled 4 KiB at a time: one
// system call per 256 ids instead of one each. Ids are not secrets (API keys use their own bytes).
const POOL = Buffer.allocUnsafe(4096);
let used = POOL.length;

/** Where the next `bytes` random bytes of the pool start (refilled when they would not fit). */
function draw(bytes: number): number {
  if (used + bytes > POOL.length) {
    randomFillSync(POOL);
    used = 0;
  }
  used += bytes;
  return used - bytes;
}

// The ids a process draws for one millisecond come from one sequence (idSequence below), so that
// objects it makes in the same millisecond (the contacts a meeting creates, requests whose clocks
// agree) sort by id in the order they were made, and a listing "newest first, ties broken by id"
// shows them newest first (docs/records.md §Listing). Another process draws its own sequence, so
// ids of one millisecond from two processes interleave at random: a tie-break that is fixed, not
// the order of arrival (docs/design.md §Pagination and order). Requests' clocks interleave, so
// the sequences of the last few milliseconds drawn are kept, oldest dropped first.
const RECENT_MS = 64;
const sequences = new Map<number, (kind: IdKind) => string>();

export function newId(kind: IdKind, now: number = Date.now()): string {
  let next = sequences.get(now);
  if (next === undefined) {
    if (sequences.size >= RECENT_MS) sequences.delete(sequences.keys().next().value as number);
    next = idSequence(now);
    sequences.set(now, next);
  }
  return next(kind);
}

/**
 * Ids drawn in increasing order, whatever their kind, all with the time `now`: the first with
 * random characters, each next one greater by a random step of 1 to 65,536. An import's new
 * objects take them, so that records are appended to the primary keys (theirs and their
 * relationships') in order rather than scattered over them: once those B-trees outgrow the
 * cache, scattered inserts dominate a large import (docs/import.md §Speed). Still opaque, time-sortable, and not guessable from another import's.
 */
export function idSequence(now: number = Date.now(), start?: bigint): (kind: IdKind) => string {
  const time = encodeTime(now);
  // 80 bits a sequence; started below 2^79, so that 2^63 steps still fit in 16 characters. Kept as
  // two halves of 40 bits in numbers (exact below 2^53), each 8 characters: an import takes an id
  // per object on its main thread, where BigInt steps and encoding would cost it far more.
  // `start` is for tests.
  const first = start ?? BigInt(`0x${randomHex(10)}`) >> 1n;
  let hi = Number(first >> 40n);
  let lo = Number(first & 0xff_ffff_ffffn);
  let high = encode(hi, 8);
  return (kind) => {
    lo += 1 + POOL.readUInt16BE(draw(2));
    if (lo >= 2 ** 40) {
      lo -= 2 ** 40;
      high = encode(++hi, 8);
    }
    return `${kind}_${time}${high}${encode(lo, 8)}`;
  };
}

function randomHex(bytes: number): string {
  const at = draw(bytes);
  return POOL.toString('hex', at, at + bytes);
}

/** ISO 8601 UTC with milliseconds, the one timestamp format of the API and the database. */
export function isoNow(now: number = Date.now()): string {
  return new Date(now).toISOString();
}

/**
 * A stable id for something that exists in every workspace without a row of its own (the system
 * definitions and their default options, docs/records.md): the same seed always gives the same
 * id, and different workspaces give different ids. Not time-sortable; nothing orders by it.
 */
export function derivedId(kind: IdKind, seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += ALPHABET[(digest[i] as number) & 31];
  return `${kind}_${out}`;
}
