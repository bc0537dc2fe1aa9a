#!/usr/bin/env bash
# What the Dockerfile does, without Docker (.ci/run calls this): copy the files the image copies
# into a temporary directory, install production dependencies only (`npm ci --omit=dev`, with
# the postinstall script), start `node src/cli/main.ts serve` with a Node 24 binary first on PATH
# (as the image has it), check /healthz, /readyz and /docs, then stop it with SIGTERM and expect
# exit code 0 within 10 s. Also: no module under src/ or bin/ imports a package that is not a
# production dependency, and every lazily loaded driver loads from the production install.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NODE24="$ROOT/node_modules/node/bin/node"
[ -x "$NODE24" ] || { echo "container-smoke: $NODE24 missing (run npm ci first)" >&2; exit 1; }
WORK="$(mktemp -d)"
SERVER=""
cleanup() {
  if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then kill -KILL "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Node 24 first on PATH, and nothing else of the development install.
mkdir -p "$WORK/bin"
ln -s "$NODE24" "$WORK/bin/node"
export PATH="$WORK/bin:$PATH"

# The image's stage 1 and 2, in one tree.
APP="$WORK/app"
mkdir -p "$APP/scripts"
cp "$ROOT/package.json" "$ROOT/package-lock.json" "$APP/"
cp "$ROOT/scripts/patch-postgres.mjs" "$ROOT/scripts/patch-sonic-boom.mjs" "$APP/scripts/"
(cd "$APP" && NODE_ENV=production npm ci --omit=dev --no-audit --no-fund --loglevel=error)
cp -r "$ROOT/bin" "$ROOT/src" "$APP/"
cd "$APP"

for dev in typescript eslint node pg playwright-core; do
  [ ! -e "node_modules/$dev" ] || { echo "container-smoke: devDependency $dev was installed" >&2; exit 1; }
done
node --input-type=module - <<'JS'
// Every bare import of src/ and bin/ names a production dependency or a built-in module.
import { builtinModules } from 'node:module';
import { globSync, readFileSync } from 'node:fs';
const deps = new Set(Object.keys(JSON.parse(readFileSync('package.json', 'utf8')).dependencies));
const bad = [];
for (const file of globSync('{src,bin}/**/*.{ts,js,mjs}')) {
  for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|\s)(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec)) continue;
    if (/^import\s+type\s/.test(m[0].trim())) continue;
    const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
    if (!deps.has(name) && !(file === 'bin/rolodex.js' && name === 'node')) bad.push(`${file}: ${spec}`);
  }
}
if (bad.length) {
  console.error(`container-smoke: imports of packages that are not production dependencies:\n${bad.join('\n')}`);
  process.exit(1);
}
// The drivers the embedded mode leaves out load from this install.
for (const f of ['./src/db/postgres/open.ts', './src/blobs/s3.ts', './src/rate-limit/redis.ts', './src/mail/smtp.ts']) await import(f);
JS

node src/cli/main.ts --version
PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
DATA_DIR="$WORK/data" HOST=127.0.0.1 PORT="$PORT" WORKERS=2 NODE_ENV=production node src/cli/main.ts serve >"$WORK/server.log" 2>&1 &
SERVER=$!
up=""
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then up=1; break; fi
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.5
done
[ -n "$up" ] || { echo "container-smoke: the server did not answer /healthz" >&2; cat "$WORK/server.log" >&2; exit 1; }
curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null
curl -fsS "http://127.0.0.1:$PORT/docs/static/index.html" >/dev/null
kill -TERM "$SERVER"
for _ in $(seq 1 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SERVER" 2>/dev/null; then echo "container-smoke: still running 10 s after SIGTERM" >&2; cat "$WORK/server.log" >&2; exit 1; fi
code=0
wait "$SERVER" || code=$?
SERVER=""
[ "$code" = 0 ] || { echo "container-smoke: exit code $code after SIGTERM" >&2; cat "$WORK/server.log" >&2; exit 1; }
echo "container-smoke: production install started with $(node --version), served /healthz, stopped on SIGTERM"
