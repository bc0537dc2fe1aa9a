// `npm run doc-refs` (part of `npm run check`): every `docs/NAME.md §Heading` reference in the
// code, the tests, the benches, the scripts, the docs and the README names a page that exists
// and a heading of that page. A reference matches when its text after `§` starts with a heading
// of the page, word for word, so a reference may run on into the sentence that holds it. A link to
// a heading, `NAME.md#anchor` or `(#anchor)` within a page of docs/ or the README, names one of its
// headings by its GitHub anchor.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const SCANNED = ['src', 'test', 'bench', 'scripts', 'docs', 'README.md'];
const SOURCE = /\.(ts|js|mjs|md)$/;
// The journal is a dated log: its own references name its sections as they were, and nothing
// else may cite it.
const JOURNAL = join('docs', 'journal');
const REFERENCE = /(?:docs\/)?([a-z0-9-]+)\.md ?§ ?([^\n]*)/g;
const LINK = /\]\((?:(?:\.\/|docs\/)?([a-z0-9-]+)\.md)?#([^)\s]+)\)/g;

function filesUnder(path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isFile()) return [full];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && SOURCE.test(e.name) && !e.parentPath.includes('node_modules') && !e.parentPath.includes(JOURNAL))
    .map((e) => join(e.parentPath, e.name));
}

const headings = new Map<string, string[] | null>();
function headingsOf(page: string): string[] | null {
  if (!headings.has(page)) {
    const file = join(root, 'docs', `${page}.md`);
    headings.set(
      page,
      existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => /^#{1,6} /.test(l))
            .map((l) => l.replace(/^#+ /, '').trim())
        : null,
    );
  }
  return headings.get(page)!;
}

/** GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * Whether `text` (what follows `§`) names `heading`: it runs through the whole heading, or it
 * stops at a closing mark (`)`, `.`, `,`, `;`, `:`) after whole words of it, as in "(see
 * §Custom objects)" for the heading "Custom objects (`rec_…`)".
 */
function names(text: string, heading: string): boolean {
  const flat = (s: string) => s.replace(/[`*]/g, '').replace(/\s+/g, ' ').trim();
  const t = flat(text);
  const h = flat(heading);
  let n = 0;
  while (n < t.length && n < h.length && t[n] === h[n]) n++;
  const wordEnd = (s: string, i: number) => i >= s.length || !/[\p{L}\p{N}]/u.test(s.charAt(i));
  if (n === h.length) return wordEnd(t, n);
  return n > 0 && (n === t.length || /[).,;:\]]/.test(t.charAt(n))) && wordEnd(h, n);
}

function readmeHeadings(): string[] {
  return readFileSync(join(root, 'README.md'), 'utf8')
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) => l.replace(/^#+ /, '').trim());
}

export function brokenReferences(): string[] {
  const broken: string[] = [];
  for (const file of SCANNED.flatMap(filesUnder)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (/journal\/[a-z0-9-]+\.md ?§/.test(line)) broken.push(`${relative(root, file)}:${i + 1}: cites a section of the journal`);
      // A reference may wrap: the next line, without its comment marker, continues it, and may
      // hold its `§`.
      const next = (lines[i + 1] ?? '').replace(/^\s*(\/\/|\*|#)?\s*/, '');
      const wrapped = /\.md$/.test(line) && next.startsWith('§') ? [...`${line}${next}`.matchAll(REFERENCE)].filter((m) => m.index < line.length) : [];
      for (const m of wrapped.length > 0 ? wrapped : line.matchAll(REFERENCE)) {
        const [, page, rest] = m;
        const text = `${rest} ${next}`;
        const found = headingsOf(page!);
        const where = `${relative(root, file)}:${i + 1}`;
        if (found === null) broken.push(`${where}: docs/${page}.md does not exist`);
        else if (!found.some((h) => names(text, h))) broken.push(`${where}: docs/${page}.md has no heading "${rest!.slice(0, 40)}…"`);
      }
      if (!file.endsWith('.md')) return;
      for (const [, page, anchor] of line.matchAll(LINK)) {
        const own = relative(root, file);
        const target = page ?? (own.startsWith('docs/') ? own.slice('docs/'.length, -'.md'.length) : null);
        const found = target === null ? readmeHeadings() : headingsOf(target);
        if (found !== null && !found.some((h) => anchorOf(h) === decodeURIComponent(anchor!)))
          broken.push(`${own}:${i + 1}: no heading of ${target === null ? 'README.md' : `docs/${target}.md`} has the anchor #${anchor}`);
      }
    });
  }
  return broken;
}

if (import.meta.main) {
  const broken = brokenReferences();
  for (const b of broken) process.stderr.write(`${b}\n`);
  if (broken.length > 0) {
    process.stderr.write(`${broken.length} reference(s) name no heading of docs/\n`);
    process.exit(1);
  }
}
