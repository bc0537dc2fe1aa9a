// Shared plumbing of the CLI commands: argument parsing, output (--json puts only JSON on stdout),
// and opening the database with the same configuration as the server.
import { once } from 'node:events';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { withoutSecrets as withoutKeySecrets } from '../auth/secrets.ts';
import { loadConfig, type Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { type Ctx, operatorCtx } from '../lib/context.ts';
import { InputError } from '../lib/errors.ts';
import { visible } from '../lib/json-numbers.ts';
import { createHttpLinks } from '../lib/links.ts';
import { isPhoneCountry } from '../lib/phone.ts';

/**
 * Wrong usage: the message is shown with the command's usage line; exit code 2. Any other
 * InputError (unknown workspace, invalid email, bad import line…) is a refused operation: its
 * message alone, exit code 1.
 */
export class UsageError extends InputError {
  override name = 'UsageError';
}

export interface Io {
  out(text: string): void;
  /**
   * Writes to stdout as is, no line end added: output written in pieces (`rolodex import --json`).
   * A promise when stdout holds more than it has written yet: the next piece waits for it, so
   * the pieces do not pile up in memory. Without it, `out` takes the pieces.
   */
  write?(text: string): void | Promise<void>;
  /** Text for stderr; a command's Io (`lineByLine`) writes each call as one line. */
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** Whether stderr is a terminal (progress bars are drawn only then). */
  isTty: boolean;
}

export const processIo: Io = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n'),
  write: (t) =>
    process.stdout.write(t)
      ? undefined
      : once(process.stdout, 'drain').then(
          () => undefined,
          (err: Error) => Promise.reject(new InputError(`cannot write stdout: ${err.message}`)),
        ),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n'),
  env: process.env,
  isTty: Boolean(process.stderr.isTTY),
};

/**
 * A refusal told in several lines (an import's report: its head, then one line per bad object),
 * each written as `errorLines` writes it, so that a line break inside one of them is shown as
 * `\n` and never starts a line of its own.
 */
export class Report extends InputError {
  override name = 'Report';
  readonly lines: readonly string[];
  constructor(lines: string[]) {
    super(lines.join('\n'));
    this.lines = lines;
  }
}

/**
 * `lines` as stderr shows them: in each, every character that prints nothing or that a terminal
 * acts on (ESC, `\r`, C1's CSI `\u009b`, a bidirectional override), a line break included,
 * written as an error message shows it (`\n`, `\u{1B}`, `\u{202E}`), so that text from a file,
 * the database or an argument quoted in an error cannot move the cursor, rewrite the lines
 * before it or forge a line of a report (docs/cli.md). What is shown so already (an import's
 * report) is written as it is.
 */
export function errorLines(lines: readonly string[]): string {
  return lines.map((line) => visible(withoutSecrets(line))).join('\n');
}

// A webhook's signing secret (docs/events.md#webhooks): `whsec_` and the base64 of 32 bytes.
const WEBHOOK_SECRET = /whsec_[A-Za-z0-9+/=]+/g;

/**
 * `text` with each secret in it cut short: an API key's to the prefix `key list` shows
 * (`rdx_ab12cd34…`), a webhook's to `whsec_…`, so that a secret given where an id or a name was
 * expected (`webhook remove rdx_…`) is not printed back on stderr (docs/cli.md).
 */
function withoutSecrets(text: string): string {
  return withoutKeySecrets(text).replace(WEBHOOK_SECRET, 'whsec_…');
}

/** `io` whose `err` writes each call as one line (`errorLines`): the Io a command is given. */
export function lineByLine(io: Io): Io {
  return { ...io, err: (text) => io.err(errorLines([text])) };
}

export type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * The options and the other arguments of a command. `takes` is how many arguments other than
 * options it takes (FILE, an id; `Infinity` for a list of ids): one more is wrong usage, never
 * ignored, since it is most often a value of an option left unquoted or without its option
 * (`key create --workspace W lists:read` would otherwise make a full-access key).
 */
export function parse(args: string[], options: Options, takes = 0): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const all = { ...options, json: { type: 'boolean' as const }, help: { type: 'boolean' as const, short: 'h' } };
  let parsed;
  try {
    parsed = parseArgs({
      args: dashValuesJoined(args, all),
      options: all,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  givenOnce(parsed.tokens);
  const extra = parsed.positionals[takes];
  if (extra !== undefined)
    throw new UsageError(`unexpected argument "${extra}" (a value is given with its option, quoted if it holds spaces: --name "Ann Lee")`);
  return parsed;
}

/**
 * An option that takes a value, given twice, is wrong usage: parseArgs keeps the last value, which
 * would make something other than what was asked for (`key create --scopes lists:read --scopes
 * accounts:read`, a key holding accounts:read alone; docs/cli.md). A flag given twice asks for
 * nothing more than once.
 */
function givenOnce(tokens: ReturnType<typeof parseArgs>['tokens']): void {
  const seen = new Map<string, string>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option' || token.value === undefined) continue;
    const first = seen.get(token.name);
    if (first !== undefined) throw new UsageError(`--${token.name} is given twice ("${first}", then "${token.value}"): give it once`, token.name);
    seen.set(token.name, token.value);
  }
}

/**
 * `args` with each value that starts with "-" joined to its option (`--expires-in -5d` becomes
 * `--expires-in=-5d`), where parseArgs refuses it as ambiguous: the value then meets the check of
 * its option, and a bad one is told as any other bad value of it (docs/cli.md). A word that
 * starts with "--" (an option, `--json`) or `-h` is never taken as a value: the option before it
 * is given none, which is wrong usage in one line.
 */
function dashValuesJoined(args: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return [...out, ...args.slice(i)];
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    const next = args[i + 1];
    if (name === undefined || !Object.hasOwn(options, name) || options[name]?.type !== 'string' || next === undefined || !/^-./.test(next)) {
      out.push(arg);
      continue;
    }
    if (next.startsWith('--') || next === '-h')
      throw new UsageError(`--${name} needs a value, not the option ${next} (a value starting with "-" is written --${name}=VALUE)`, name);
    out.push(`${arg}=${next}`);
    i++;
  }
  return out;
}

/** Wrong usage of an option given a value it does not take: one line naming the option, the value given and what it takes. */
export function badValue(option: string, given: string, takes: string): UsageError {
  return new UsageError(`--${option} must be ${takes} (got "${given}")`, option);
}

/** `given` when it is one of `allowed`, else wrong usage naming them; undefined (the option not given) stays undefined. */
export function oneOf<T extends string>(option: string, given: string | boolean | undefined, allowed: readonly T[]): T | undefined {
  if (given === undefined) return undefined;
  if ((allowed as readonly unknown[]).includes(given)) return given as T;
  throw badValue(option, String(given), allowed.length === 2 ? `${allowed[0]} or ${allowed[1]}` : `one of ${allowed.join(', ')}`);
}

/** `given`, an ISO 3166-1 alpha-2 country code (either case), else wrong usage; undefined stays undefined. */
export function countryCode(option: string, given: string | undefined): string | undefined {
  if (given === undefined || isPhoneCountry(given.toUpperCase())) return given;
  throw badValue(option, given, 'an ISO 3166-1 alpha-2 country code such as DE');
}

/**
 * The `--description` of a command: undefined when not given; null, no description, when given
 * empty (`--description ''`), as a definition or webhook answers one it has none of, so that the
 * option clears what a rename would keep (docs/cli.md).
 */
export function description(values: Record<string, unknown>): string | null | undefined {
  const v = values.description;
  return typeof v !== 'string' ? undefined : v === '' ? null : v;
}

/** The options a usage line names (`--workspace W [--json]` → workspace, json). */
export function optionsOf(line: string): string[] {
  return [...line.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1] as string);
}

/**
 * Wrong usage when `values` hold an option that the form `form` of the command (`create`, `option
 * add`) does not take: a command's options are parsed together for all its forms, and one given to
 * a form that has no use for it (`workspace create --default-country DE`) would otherwise be
 * ignored without a word (docs/cli.md). What a form takes is read from its lines of the command's
 * `usage` (`archive|unarchive` is a line of both), narrowed by `only` where one form has two lines
 * (`definition add`, of a field or of a relationship); `hint` adds to the refusal of an option.
 */
export function onlyOptionsOf(
  usage: string,
  form: string,
  values: Record<string, unknown>,
  opts: { only?: (line: string) => boolean; name?: string; hint?: (option: string) => string } = {},
): void {
  const words = form.split(' ');
  const lines = usage.split('\n').filter((l) => {
    const w = l.split(' ');
    const after = w[2 + words.length] ?? '';
    return w[0] === 'rolodex' && words.every((x, i) => (w[2 + i] ?? '').split('|').includes(x)) && !/^[a-z]/.test(after) && (opts.only?.(l) ?? true);
  });
  if (lines.length === 0) return;
  const takes = new Set(['json', 'help', ...lines.flatMap(optionsOf)]);
  const command = lines[0]?.split(' ')[1];
  for (const [name, v] of Object.entries(values))
    if (v !== undefined && !takes.has(name))
      throw new UsageError(`--${name} is not an option of "${command} ${opts.name ?? form}"${opts.hint?.(name) ?? ''}`, name);
}

/**
 * The subcommand `args` start with, and the arguments after it, checked before anything else: a
 * missing one (an option first, `trash --workspace W`) or one not in `names` is wrong usage naming
 * the subcommands, not a complaint about an option the subcommand would have needed. `of` names
 * the command word before a nested subcommand (`definition option add`).
 */
export function subcommand(args: string[], names: readonly string[], of?: string): [string, string[]] {
  const [sub, ...rest] = args;
  const choices = names.join(', ');
  if (sub === undefined || sub.startsWith('-')) throw new UsageError(`a subcommand${of ? ` of ${of}` : ''} is required (${choices})`);
  if (!names.includes(sub)) throw new UsageError(`unknown subcommand "${of ? `${of} ` : ''}${sub}" (${choices})`);
  return [sub, rest];
}

/** How many arguments other than options subcommand `sub` takes, as `takes` of `parse`; an unknown one is reported as such. */
export function takes(sub: string | undefined, counts: Record<string, number>): number {
  return sub !== undefined && Object.hasOwn(counts, sub) ? (counts[sub] as number) : Infinity;
}

export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`, name);
  return v;
}

// What a terminal acts on rather than shows: the control characters (C0 with ESC and `\r`, DEL,
// C1 with CSI) and the bidirectional controls, which reorder the text after them.
const UNPRINTABLE = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;
const UNPRINTABLE_OR_BACKSLASH = /[\\\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;
const SHORT: Record<string, string> = { '\\': '\\\\', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' };
const escaped = (c: string): string => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * Text someone else wrote (a name, a label, an address, a description) as a human listing prints
 * it: each character a terminal would act on written as a JSON escape (`\u001b`, `\r`,
 * `\u202e`), so that a name cannot move the cursor, clear the screen or rewrite the lines printed
 * before it, and a backslash as `\\`, as JSON writes it, so that a name holding the six
 * characters `\u001b` is told from one holding ESC (docs/cli.md). Everything else is printed as
 * written; `--json` gives the exact text.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE_OR_BACKSLASH, escaped);
}

/** `text` as a JSON string, quotes included, with the rest of what `printable` escapes escaped too. */
export function quoted(text: string): string {
  return JSON.stringify(text).replace(UNPRINTABLE, escaped);
}

/** Prints `data` as JSON with --json, else the human text. */
export function print(io: Io, json: boolean | undefined, data: unknown, human: string): void {
  io.out(json ? JSON.stringify(data) : human);
}

/**
 * Runs `fn` on the database, migrated. A command given a DATA_DIR without the embedded database
 * is refused with one line and creates nothing (docs/cli.md §What creates the database).
 */
export async function withDb<T>(io: Io, fn: (db: Db, config: Config) => Promise<T>, opts: { writerThread?: boolean } = {}): Promise<T> {
  return opened(io, fn, { ...opts, create: false });
}

/** withDb for the commands that do their work on an empty database: they create the embedded one. */
export async function withNewDb<T>(io: Io, fn: (db: Db, config: Config) => Promise<T>): Promise<T> {
  return opened(io, fn, { create: true });
}

async function opened<T>(io: Io, fn: (db: Db, config: Config) => Promise<T>, opts: { writerThread?: boolean; create: boolean }): Promise<T> {
  const config = loadConfig(io.env);
  // Loaded here: the database layer is large, and `rolodex --version` or `serve` need none of it first.
  const { openDatabase } = await import('../runtime.ts');
  const db = await openDatabase(config, undefined, opts);
  try {
    return await fn(db, config);
  } finally {
    await db.close();
  }
}

/** The ctx of an operator command on one workspace (one clock for the whole command). */
export function operator(db: Db, config: Config, workspaceId: string): Ctx {
  return operatorCtx(db.kysely, workspaceId, { links: createHttpLinks(config.publicAppUrl) });
}

/** "1 contact", "2 contacts", "3 opportunities", "2 mailboxes": a count of one kind of object in the summary. */
export function countOf(n: number, kind: string): string {
  if (n === 1) return `1 ${kind}`;
  return `${n} ${kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : kind.endsWith('x') ? `${kind}es` : `${kind}s`}`;
}
