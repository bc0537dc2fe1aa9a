// `npm run structure [-- DIR]`: the shape of src/ in figures, from the rules of
// .dependency-cruiser.mjs: files and lines, import cycles (type-only imports included), imports
// from the domain into the transport, and imports that point up the layers of
// docs/architecture.md §Layers. DIR (default: this checkout) lets one measure another checkout
// with today's rules, e.g. an older commit in a `git worktree`. `--route 'METHOD /path'` (and
// `--body JSON`, by default `{"fields":{}}`, a record create's) also lists the files one such
// request runs through (scripts/route-trace.ts).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { printTrace, traceRoute } from './route-trace.ts';

const here = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const positional = args.filter((a, i) => !a.startsWith('--') && !['--route', '--body'].includes(args[i - 1] ?? ''));
const dir = resolve(positional[0] ?? here);
const bin = join(here, 'node_modules/.bin/depcruise');
const config = join(here, '.dependency-cruiser.mjs');

interface Module {
  source: string;
  dependencies: Array<{ resolved: string }>;
}

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: Array<{ name: string }>;
}

function files(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

const out = execFileSync(bin, ['src', '--config', config, '--output-type', 'json', '--no-progress'], {
  cwd: dir,
  maxBuffer: 64 * 1024 * 1024,
  encoding: 'utf8',
});
const cruise = JSON.parse(out) as { modules: Module[]; summary: { violations: Violation[] } };
const violations = cruise.summary.violations;

const sources = files(join(dir, 'src'));
const lines = sources.map((f) => readFileSync(f, 'utf8').split('\n').length - 1).sort((a, b) => a - b);
const folders = new Set(sources.map((f) => relative(join(dir, 'src'), f).split('/').slice(0, -1).join('/') || '.'));

const cycles = new Set(violations.filter((v) => v.rule.name === 'no-circular').map((v) => [v.from, ...(v.cycle ?? []).map((c) => c.name)].sort().join(' ')));
const byRule = new Map<string, Violation[]>();
for (const v of violations) if (v.rule.name !== 'no-circular') byRule.set(v.rule.name, [...(byRule.get(v.rule.name) ?? []), v]);
const upward = [...byRule].filter(([name]) => name.startsWith('no-upward-')).flatMap(([, vs]) => vs);
const uniquePairs = (vs: Violation[]) => new Set(vs.map((v) => `${v.from} -> ${v.to}`)).size;

console.log(`checkout: ${dir}`);
console.log(
  `src: ${sources.length} files in ${folders.size} folders, ${lines.reduce((a, b) => a + b, 0)} lines; median ${lines[Math.floor(lines.length / 2)]} lines, largest ${lines.at(-1)}, ${lines.filter((n) => n > 200).length} over 200, ${lines.filter((n) => n > 400).length} over 400`,
);
console.log(`import cycles: ${cycles.size}`);
console.log(`domain -> transport imports: ${uniquePairs(byRule.get('domain-not-transport') ?? [])}`);
console.log(`upward imports (a layer importing one above it): ${uniquePairs(upward)}`);
for (const [name, vs] of [...byRule].sort()) console.log(`  ${name}: ${uniquePairs(vs)}`);
if (args.includes('--list') && !args.includes('--route')) {
  for (const c of cycles) console.log(`cycle: ${c}`);
  for (const v of violations) if (v.rule.name !== 'no-circular') console.log(`${v.rule.name}: ${v.from} -> ${v.to}`);
}

const route = option('--route');
if (route) {
  const imports = new Map(cruise.modules.map((m) => [m.source, m.dependencies.map((d) => d.resolved)]));
  const body = option('--body');
  printTrace(route, await traceRoute(dir, route, body === undefined ? { fields: {} } : JSON.parse(body), imports));
}
