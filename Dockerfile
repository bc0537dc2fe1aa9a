# syntax=docker/dockerfile:1
# Rolodex: the server and its CLI, on Node 24 from the image (docs/deploy.md §Container).
# .ci/run builds the same tree the same way and smoke-tests it (scripts/container-smoke.sh):
# keep the two in step.

# Stage 1: production dependencies only. The `node` devDependency (Node 24 for hosts whose
# system Node is older) is not installed: the image has Node 24 already.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall scripts mend postgres.js and sonic-boom (scripts/patch-*.mjs).
COPY scripts/patch-postgres.mjs scripts/patch-sonic-boom.mjs ./scripts/
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error && npm cache clean --force

# Stage 2: the runtime, as the unprivileged `node` user of the base image.
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
# The volume's directory is the `node` user's alone (0700): a named volume takes its mode.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME /data
EXPOSE 3000
# Node is PID 1 and handles SIGTERM itself: requests in flight finish, then it exits (≤ 10 s).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/rolodex.js", "serve"]
