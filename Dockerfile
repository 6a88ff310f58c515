# syntax=docker/dockerfile:1
# One image, three processes: `api` (default), `worker`, `webhooks`; see docs/guides/scaling-and-production.md.
#   docker build -t agentplane:local .
#   docker run --rm -e REDIS_URL=redis://host:6379 -p 8420:8420 agentplane:local api
ARG NODE_IMAGE=node:24-bookworm-slim

# Compile TypeScript with the full dependency tree. Scripts are skipped: tsc needs none, and
# the native optional packages of the dev tools (ssh2, cpu-features) are never used here.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
# The chat example's page (SERVICE_EXAMPLES=true serves it from dist/examples/chat).
COPY examples/langgraph/chat-page ./examples/langgraph/chat-page
# `npm run build` compiles and copies the files read at run time beside the code (the Redis
# Lua scripts) into the same place in dist/.
COPY scripts ./scripts
RUN npm run build

# Production dependencies only. --ignore-scripts also keeps swagger-ui-dist's analytics
# postinstall (@scarf/scarf) from calling home; msgpackr-extract and esbuild load their
# prebuilt platform packages without install scripts.
# node_modules/@agentplane/server -> /app: an agents module anywhere under /app (AGENTS_MODULE,
# e.g. a folder mounted at /app/agents, with or without its own package.json) resolves
# `import { defineAgent } from '@agentplane/server'` to this very package.
# The LangGraph packages (optional peer dependencies of the npm package, for SERVICE_LANGGRAPH_JSON)
# are production dependencies of the image, at the versions the lock file pins, so graphs run in
# it as they are: they move from devDependencies to dependencies before the install.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN node -e "const fs = require('node:fs'); const p = require('./package.json'); \
for (const name of Object.keys(p.peerDependencies)) { p.dependencies[name] = p.devDependencies[name]; delete p.devDependencies[name]; } \
fs.writeFileSync('package.json', JSON.stringify(p, null, 2));" \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && mkdir -p node_modules/@agentplane && ln -s ../.. node_modules/@agentplane/server

FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node and reaps zombies. node handles SIGTERM itself
# (ordered drain bounded by SERVICE_SHUTDOWN_TIMEOUT_MS), so `docker run --init` or a
# Kubernetes pod without tini behaves the same.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
# In a container loopback reaches no one: every interface. With SERVICE_AUTH=none the API still
# answers only the Host names localhost, 127.0.0.1, [::1] and SERVICE_ALLOWED_HOSTS.
ENV SERVICE_HOST=0.0.0.0 WEBHOOK_HOST=0.0.0.0
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --chmod=0755 deploy/docker/agentplane /usr/local/bin/agentplane
COPY deploy/docker/healthcheck.mjs ./deploy/healthcheck.mjs
# The `node` user of the base image, numeric so Kubernetes can verify runAsNonRoot. Nothing
# under /app is writable by it; the process writes nothing but logs to stdout.
USER 1000:1000
EXPOSE 8420 8421 8422
# Liveness of whichever process this container runs (api 8420, worker 8421, webhooks 8422,
# or HEALTHCHECK_PORT); readiness is for load balancers, see /health/ready.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--", "agentplane"]
CMD ["api"]
