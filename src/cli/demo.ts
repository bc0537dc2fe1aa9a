// `rolodex demo`: a ready-to-try workspace with sample data of every kind, and keys to call it.
import { PUBLIC_SCOPES } from '../auth/scopes.ts';
import { createKey } from '../auth/service.ts';
import { runImport } from '../import/run.ts';
import { systemCtx } from '../lib/context.ts';
import { runningServerUrl } from '../lifecycle.ts';
import { openBlobStore } from '../runtime.ts';
import { createWorkspace } from '../workspaces/service.ts';
import { demoParts } from './demo-parts.ts';
import { importKinds } from './import-kinds.ts';
import { countOf, type Io, operator, parse, print, withNewDb } from './io.ts';

export const usage = `rolodex demo [--json]   (creates a sample workspace and prints keys and curl examples)`;

export async function run(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, {});
  // A new installation's sample: it creates the database (docs/cli.md §What creates the database).
  const out = await withNewDb(io, async (db, config) => {
    const ws = await createWorkspace(systemCtx(db.kysely), { name: 'Acme (demo)' });
    const ctx = operator(db, config, ws.id);
    const parts = demoParts();
    const blobs = await openBlobStore(config);
    try {
      const objects = parts.flatMap((p) => p.objects?.() ?? []);
      const imported = await runImport(ctx, {
        kinds: importKinds({ blobs, downloadTtlSeconds: config.downloadTtlSeconds }),
        text: objects.map((o) => JSON.stringify(o)).join('\n'),
      });
      const ann = imported.ids.user?.['u-ann'] as string;
      const bob = imported.ids.user?.['u-bob'] as string;
      const keys = {
        admin: await createKey(ctx, { userId: ann, scopes: null, expiresInMs: null }),
        member: await createKey(ctx, { userId: bob, scopes: null, expiresInMs: null }),
        workspace: await createKey(ctx, { userId: null, scopes: null, expiresInMs: null }),
        // Every read scope there is and no other (docs/cli.md: `rolodex demo`), so that it reads
        // whatever the full-access keys read and writes nothing.
        readOnly: await createKey(ctx, { userId: bob, scopes: PUBLIC_SCOPES.filter((s) => s.endsWith(':read')), expiresInMs: null }),
      };
      const lines: string[] = [];
      for (const part of parts) if (part.after) lines.push(...(await part.after({ ...ctx, imported })));
      return { config, ws, imported, keys, lines };
    } finally {
      await blobs.close();
    }
  });
  // The address clients use: PUBLIC_BASE_URL when set, else that of the server running on this
  // DATA_DIR (whatever --port it was given), else the one PORT and HOST describe.
  const running = io.env.PUBLIC_BASE_URL ? undefined : runningServerUrl(out.config.dataDir);
  const base = running ?? out.config.publicBaseUrl;
  const fill = (l: string) => l.replaceAll('{base}', base).replaceAll('{key}', out.keys.admin.secret);
  // Every example runs as printed, with the admin key (test/ops/demo.test.ts runs them with curl).
  const examples = [`curl -s -H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01" {base}/v1/auth/validate`, ...out.lines].map(fill);
  const mcp = out.config.mcp ? fill('claude mcp add --transport http rolodex {base}/mcp --header "Authorization: Bearer {key}"') : null;
  const keys = Object.fromEntries(Object.entries(out.keys).map(([k, v]) => [k, { id: v.id, secret: v.secret, subjectType: v.subjectType, scopes: v.scopes }]));
  const human = [
    `demo workspace ${out.ws.id} (${out.ws.name}): ${Object.entries(out.imported.counts)
      .map(([k, n]) => countOf(n, k))
      .join(', ')}`,
    '',
    'keys (shown once):',
    ...Object.entries(keys).map(([name, k]) => `  ${name.padEnd(10)} ${k.secret}  (${k.subjectType}, ${k.scopes.length ? k.scopes.join(',') : 'full access'})`),
    '',
    running || io.env.PUBLIC_BASE_URL ? `try (the server at ${base}):` : `try (once \`rolodex serve\` runs at ${base}):`,
    ...examples.map((l) => `  ${l}`),
    ...(mcp ? ['', 'connect an MCP client (docs/mcp.md), e.g. Claude Code:', `  ${mcp}`] : []),
  ].join('\n');
  print(
    io,
    values.json as boolean,
    { workspace: out.ws, counts: out.imported.counts, ids: out.imported.ids, keys, baseUrl: base, examples, ...(mcp ? { mcp } : {}) },
    human,
  );
}
