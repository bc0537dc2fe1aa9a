// The import rules of docs/architecture.md §Layers, checked by `npm run check` (npm run deps).
// Type-only imports count as much as any other: a type loop is still a loop.
//
// Layers, bottom to top; an import may only point down or stay within its layer:
//   base       src/config.ts, src/config-values.ts, src/data-dir.ts, src/logger.ts, src/lib/, src/db/
//   infra      src/blobs/, src/rate-limit/, src/metrics/, src/mail/
//   import     src/import/ (the import runner and the contract of an import kind)
//   domain     the resource folders, except their routes
//   jobs       src/jobs/ (background work over several resources)
//   transport  src/http/, src/mcp/ and each resource's routes.ts / *-routes.ts
//   app        src/app.ts, src/server.ts, src/runtime.ts, src/cluster*.ts, src/cli/, src/docs/
const RESOURCES =
  'auth|definitions|objects|workspaces|users|members|records|lists|messages|channels|files|knowledge|idempotency|meetings|mailboxes|emails|changes|webhooks|enrichment';
const ROUTES = '(^|/)[a-z-]*routes[.]ts$';

const LAYERS = [
  { name: 'base', path: ['^src/(config|config-values|data-dir|logger)[.]ts$', '^src/(lib|db)/'] },
  { name: 'infra', path: ['^src/(blobs|rate-limit|metrics|mail)/'] },
  { name: 'import', path: ['^src/import/'] },
  { name: 'domain', path: [`^src/(${RESOURCES})/`], pathNot: [ROUTES] },
  { name: 'jobs', path: ['^src/jobs/'] },
  { name: 'transport', path: ['^src/http/', '^src/mcp/', `^src/(${RESOURCES})/${ROUTES.slice(6)}`] },
  { name: 'app', path: ['^src/[^/]+[.]ts$', '^src/(cli|docs)/'] },
];

const join = (paths) => paths.join('|');
const APP_NOT = '^src/(config|config-values|data-dir|logger)[.]ts$';

// One rule per layer: nothing in it imports a layer above it.
const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} must not import a layer above it; see docs/architecture.md §Layers.`,
  severity: 'error',
  from: { path: join(layer.path), ...(layer.pathNot ? { pathNot: join(layer.pathNot) } : {}) },
  to: { path: join(LAYERS.slice(i + 1).flatMap((l) => l.path)), pathNot: APP_NOT },
}));

export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import cycles (type-only imports included) make load order fragile and layers meaningless.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-not-transport',
      comment: 'Services, repositories, tables, import kinds, lib, db and infra know nothing of HTTP: no src/http/, no fastify.',
      severity: 'error',
      from: { path: `^src/(lib|db|blobs|rate-limit|metrics|mail|import|jobs|${RESOURCES})/`, pathNot: ROUTES },
      to: { path: ['^src/http/', '(^|/)node_modules/(fastify|@fastify/[^/]+)/', `^src/(${RESOURCES})/${ROUTES.slice(6)}`] },
    },
    {
      name: 'db-sealed',
      comment:
        'The database layer is imported through src/db/index.ts only: which database a handle talks to, and how a read is sent, stay inside it (docs/architecture.md §Database layer).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^src/db/', pathNot: '^src/db/index[.]ts$' },
    },
    {
      name: 'sqlite-in-db',
      comment:
        'node:sqlite is opened inside the database layer only (docs/architecture.md §Database layer): a temporary store of a command is a scratch store (src/db/scratch.ts).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^(node:)?sqlite$', dependencyTypes: ['core'] },
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    includeOnly: ['^src/', 'node_modules/(fastify|@fastify)', '^(node:)?sqlite$'],
    exclude: { path: '^src/db/migrations/' },
  },
};
