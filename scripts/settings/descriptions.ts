/**
 * What each setting means, kept in one place: the settings reference (docs/reference/settings)
 * is rendered from the configuration schemas (name, default, accepted values) and this map
 * (group and meaning); `npm run docs:settings` writes it and a test checks that the map covers
 * exactly the settings the processes read. `shown` replaces the schema's default where the
 * schema cannot say it (computed, parsed later, or in another unit than the one written).
 * Links are relative to the reference page.
 */

/** The meaning of one setting and where it is listed. */
export interface SettingDoc {
  group: SettingGroup;
  /** The default as a reader writes it, when the schema's own is not that. */
  shown?: string;
  text: string;
}

/** The sections of the reference, in order. */
export const SETTING_GROUPS = [
  'Listening and Redis',
  'Limits and retention',
  'Fair share between tenants',
  'Features',
  'Authentication',
  'Runs and workers',
  'Outbound run webhooks',
  'Process',
  'Webhook receiver',
  'Chat gateway',
] as const;

export type SettingGroup = (typeof SETTING_GROUPS)[number];

export const SETTING_DOCS: Readonly<Record<string, SettingDoc>> = {
  SERVICE_HOST: {
    group: "Listening and Redis",
    shown: "`127.0.0.1` without auth, else `0.0.0.0`",
    text: "Listen address of the API (and of the worker's probes). With `SERVICE_AUTH=none` it is loopback unless set; the image, compose and the chart set `0.0.0.0`.",
  },
  SERVICE_ALLOWED_HOSTS: {
    group: "Listening and Redis",
    text: "`Host` names answered besides `localhost`, `127.0.0.1` and `[::1]` (any port): comma-separated names without a port (`api.example.com,[fd00::1]`), or `*` for any. Unset: any name with authentication; with `SERVICE_AUTH=none` only the loopback names, so a DNS-rebinding page cannot call it. Another name is 403 `forbidden`, probes included.",
  },
  SERVICE_PORT: {
    group: "Listening and Redis",
    text: "Listen port of the API (`0` picks a free one).",
  },
  REDIS_URL: {
    group: "Listening and Redis",
    text: "`redis://` or `rediss://` URL. Set: Redis holds all state, events, queues and rate limits. Unset: embedded mode, one process in memory.",
  },
  REDIS_CLUSTER_NODES: {
    group: "Listening and Redis",
    text: "A Redis Cluster instead: some of its nodes, `host:port,host:port` (one reachable node finds the rest). See [Redis Cluster and Sentinel](../guides/scaling-and-production.md#redis-cluster-and-sentinel).",
  },
  REDIS_SENTINELS: {
    group: "Listening and Redis",
    text: "Redis Sentinel instead: the Sentinels, `host:port,…`; every process follows the master they name across failovers. At most one of `REDIS_URL`, `REDIS_CLUSTER_NODES`, `REDIS_SENTINELS`.",
  },
  REDIS_SENTINEL_NAME: {
    group: "Listening and Redis",
    text: "The master's name at the Sentinels.",
  },
  REDIS_USERNAME: {
    group: "Listening and Redis",
    text: "ACL user of the cluster's nodes or the Sentinel-named master (a URL carries its own).",
  },
  REDIS_PASSWORD: {
    group: "Listening and Redis",
    text: "Password of the cluster's nodes or the Sentinel-named master (never logged).",
  },
  REDIS_SENTINEL_PASSWORD: {
    group: "Listening and Redis",
    text: "Password of the Sentinels themselves.",
  },
  REDIS_TLS: {
    group: "Listening and Redis",
    text: "TLS to the cluster's nodes or the Sentinel-named master (a URL says `rediss://`).",
  },
  REDIS_SENTINEL_TLS: {
    group: "Listening and Redis",
    text: "TLS to the Sentinels.",
  },
  REDIS_TLS_CA_FILE: {
    group: "Listening and Redis",
    text: "PEM file of the CAs to trust for every TLS connection to Redis (`rediss://` included) instead of Node's bundle.",
  },
  REDIS_WAIT_REPLICAS: {
    group: "Listening and Redis",
    text: "Durable acknowledgements: a run start (202), an approval decision and a checkpoint patch are answered only once this many replicas have the write (Redis `WAIT`). `0`: off, no extra command. See [Redis Cluster and Sentinel](../guides/scaling-and-production.md#redis-cluster-and-sentinel).",
  },
  REDIS_WAIT_TIMEOUT_MS: {
    group: "Listening and Redis",
    text: "Longest wait for those replicas; past it the request answers 503 `unavailable` (`Retry-After: 1`), and the write may or may not survive: retry.",
  },
  SERVICE_KEY_PREFIX: {
    group: "Listening and Redis",
    text: "Prefix of every Redis key (`[A-Za-z0-9._-]`, up to 64).",
  },
  SERVICE_MAX_BODY_BYTES: {
    group: "Limits and retention",
    text: "Largest accepted request body; larger is 413 `payload_too_large`.",
  },
  SERVICE_MAX_STATE_BYTES: {
    group: "Limits and retention",
    text: "Largest session state, as JSON bytes (UTF-8, on both backends) of its keys and values. A patch or run input that would pass it is 413 `payload_too_large` and writes nothing. 1 MiB + 64 KiB: a run input of the largest body, or a 1 MiB webhook delivery with its envelope, fits with room for the agent's keys; set lower, the webhook receiver reads at most this less 64 KiB (see [Webhooks](../guides/webhooks.md)). For a LangGraph graph: each checkpoint's whole state and each task's writes (the run fails, nothing stored past it).",
  },
  SERVICE_MAX_STATE_KEYS: {
    group: "Limits and retention",
    text: "Most keys a session state may hold; past it 400 `bad_request`, nothing written.",
  },
  SERVICE_CHECKPOINTS_RETAIN: {
    group: "Limits and retention",
    text: "Checkpoints kept per session (history); older ones are dropped, the latest never is. A LangGraph thread keeps this many per namespace and this many across its subgraph namespaces.",
  },
  SERVICE_LANGGRAPH_STORE_MAX_BYTES: {
    group: "Limits and retention",
    text: "Bytes of LangGraph memory items (a graph's cross-thread store) one tenant may hold, keys and values; a put past it is refused (413 `payload_too_large`) and writes nothing. At least 1: no value turns the cap off.",
  },
  SERVICE_ASSISTANTS_MAX: {
    group: "Limits and retention",
    text: "LangGraph assistants one tenant may store (`POST /assistants`; the graphs' default assistants do not count); a creation past it is refused (413 `payload_too_large`) and writes nothing. At least 1.",
  },
  SERVICE_ASSISTANT_VERSIONS_MAX: {
    group: "Limits and retention",
    text: "Versions one stored assistant may have (each change is one); a change past it is refused (413) and writes nothing (setting a version latest adds none). At least 1.",
  },
  SERVICE_ASSISTANTS_MAX_BYTES: {
    group: "Limits and retention",
    text: "Bytes of JSON one tenant's stored assistants may take, each version counted; a creation or change past it is refused (413 `payload_too_large`) and writes nothing. At least 1.",
  },
  SERVICE_MAX_PAGE_BYTES: {
    group: "Limits and retention",
    text: "Most JSON one `GET /api/sessions/history` page holds (one checkpoint always fits); `next_offset` continues. A `POST /threads/search` or `POST /assistants/search` page stops there too (one thread, one assistant, always fits); `X-Pagination-Next` continues.",
  },
  SERVICE_SESSION_TTL: {
    group: "Limits and retention",
    shown: "`0` (off)",
    text: "Sessions idle this long (no run, no checkpoint) are removed with everything of them; seconds or `30m`, `12h`, `30d`. Turn it on in production (see [Production](../guides/scaling-and-production.md#production-sizing-and-retention)).",
  },
  SERVICE_REQUEST_TIMEOUT_MS: {
    group: "Limits and retention",
    text: "Longest time a client may take to send a request's headers and body; slower requests are cut (408). Event streams are not affected.",
  },
  SERVICE_SSE_MAX_PER_PRINCIPAL: {
    group: "Limits and retention",
    text: "Event streams one caller (API key, token subject, or client address without auth) may hold open on one replica; past it 429. `0`: no limit.",
  },
  SERVICE_SSE_MAX_PER_TENANT: {
    group: "Limits and retention",
    text: "Event streams one tenant may hold open on one replica; past it 429. `0`: no limit.",
  },
  SERVICE_WAIT_MAX_PER_PRINCIPAL: {
    group: "Limits and retention",
    text: "Held waits (`POST /api/runs/wait`, an approval answer with `wait_ms`) one caller may have on one replica; past it 429. Waits do not count against the stream caps. `0`: no limit.",
  },
  SERVICE_SWAGGER: {
    group: "Features",
    text: "`false` removes the console and the OpenAPI document (`/swagger*` answer 404).",
  },
  SERVICE_CONSOLE: {
    group: "Features",
    text: "`false` removes the web console (`/console*` answer 404); see [The console](../guides/console.md).",
  },
  SERVICE_EXAMPLES: {
    group: "Features",
    text: "`true` serves the chat example at `/examples/chat/`: a page on `useStream` of `@langchain/react` for the `chat` graph of `examples/langgraph` (it needs that graph in `SERVICE_LANGGRAPH_JSON` and calls the API without a credential); see [LangGraph graphs](../guides/langgraph.md). Off: `/examples*` answer 404.",
  },
  SERVICE_APPROVALS: {
    group: "Features",
    text: "`false` detaches the approval routes: 404 and absent from the OpenAPI document.",
  },
  SERVICE_SCHEDULES: {
    group: "Features",
    text: "`false` detaches the schedule routes like the approval ones (see [Schedules](../guides/schedules.md)).",
  },
  SERVICE_SCHEDULES_MAX_PER_TENANT: {
    group: "Limits and retention",
    text: "Schedules one tenant may hold, LangGraph crons included; one more is refused (409 `conflict`) and nothing is stored. At least 1.",
  },
  SERVICE_SSE_HEARTBEAT_MS: {
    group: "Limits and retention",
    text: "Interval of the `: keep-alive` comment on event streams, and of the check that the runs followed by held waits and run streams still exist.",
  },
  SERVICE_EVENTS_RETAIN: {
    group: "Limits and retention",
    text: "Run events kept per tenant for resuming a stream with `Last-Event-ID`: the newest this many, and up to 1 % more between the trims of the oldest.",
  },
  SERVICE_EVENTS_MAX_BYTES: {
    group: "Limits and retention",
    text: "Bytes of those events (their JSON, UTF-8) kept per tenant, 64 MiB; past it the oldest go, as past the count. At least 1 MiB.",
  },
  SERVICE_EVENTS_RUN_MAX_BYTES: {
    group: "Limits and retention",
    text: "Bytes of events kept per run, 16 MiB; past it that run's oldest go, so one run streaming large chunks cannot push the other runs' events out. At least 1 MiB.",
  },
  SERVICE_SHUTDOWN_DELAY_MS: {
    group: "Process",
    text: "After SIGTERM, how long `/health/ready` answers 503 while requests are still served, before the listener closes.",
  },
  SERVICE_SHUTDOWN_TIMEOUT_MS: {
    group: "Process",
    text: "Bound of the whole graceful shutdown; past it the process exits 1. A worker gives its running jobs this long to finish, hands back those still running (another worker resumes them from their latest checkpoint once `WORKER_STALLED_INTERVAL_MS` has passed) and exits 0; its own bound is 5 s more.",
  },
  SERVICE_REPLICA_ID: {
    group: "Process",
    shown: "host name",
    text: "Name of this replica, sent in the `X-Served-By` response header.",
  },
  SERVICE_AUTH: {
    group: "Authentication",
    text: "`none`, `jwt` or `apikey`; anything else stops the process.",
  },
  SERVICE_RBAC: {
    group: "Authentication",
    text: "Role enforcement on `/api/*`; effective only with authentication on.",
  },
  SERVICE_JWT_SECRET: {
    group: "Authentication",
    text: "Shared secret: enables HS256 tokens.",
  },
  SERVICE_JWT_ISSUER: {
    group: "Authentication",
    text: "Expected `iss` claim, checked when set.",
  },
  SERVICE_JWT_AUDIENCE: {
    group: "Authentication",
    text: "Expected `aud` claim, checked when set.",
  },
  SERVICE_JWT_JWKS_URL: {
    group: "Authentication",
    text: "`http(s)` URL of a JSON Web Key Set: enables RS256 (keys cached by `kid`).",
  },
  SERVICE_JWT_PUBLIC_KEY: {
    group: "Authentication",
    text: "Static RS256 public key (PEM, SPKI) instead of a key set.",
  },
  SERVICE_JWT_TRUSTED_ISSUERS: {
    group: "Authentication",
    text: "Comma-separated issuers whose tokens may omit `exp`.",
  },
  SERVICE_JWT_TENANT_CLAIM: {
    group: "Authentication",
    text: "Claim that names the caller's tenant.",
  },
  SERVICE_JWT_DEFAULT_TENANT: {
    group: "Authentication",
    text: "Tenant for tokens without the tenant claim; unset, such tokens are 401.",
  },
  SERVICE_JWT_MAX_AGE: {
    group: "Authentication",
    shown: "`24h`",
    text: "Longest token lifetime (`exp - iat`) and oldest `iat` accepted: seconds or `30m`/`12h`/`7d`; `0` turns it off. See [Security settings](../guides/auth-and-tenants.md#security-settings).",
  },
  SERVICE_API_KEYS: {
    group: "Authentication",
    text: "API keys, `key:role:tenant,…` (role and tenant optional: `viewer`, `DefaultTenant`). Required with `SERVICE_AUTH=apikey`.",
  },
  SERVICE_API_KEY_HEADER: {
    group: "Authentication",
    text: "Header that carries the API key.",
  },
  SERVICE_RATE_LIMIT: {
    group: "Limits and retention",
    shown: "`1200/60s`",
    text: "Global rate limit per client address, or `off`.",
  },
  SERVICE_QUOTA_PER_KEY: {
    group: "Limits and retention",
    shown: "`off`",
    text: "Quota per API key or JWT subject.",
  },
  SERVICE_QUOTA_PER_TENANT: {
    group: "Limits and retention",
    shown: "`off`",
    text: "Quota per tenant.",
  },
  SERVICE_TRUST_PROXY: {
    group: "Limits and retention",
    text: "Take the client address from `X-Forwarded-For` (set it behind an ingress), only from the proxies of `SERVICE_TRUSTED_PROXIES`.",
  },
  SERVICE_TRUSTED_PROXIES: {
    group: "Limits and retention",
    shown: "loopback and private ranges",
    text: "Addresses or CIDRs of the proxies whose `X-Forwarded-For` counts (`10.0.0.0/8,fd00::/8`): its last entry, the address the proxy saw; one that is not an IP address is ignored (the peer counts). Default `127.0.0.0/8,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7`.",
  },
  SERVICE_WEBHOOK_SIGNING_SECRET: {
    group: "Outbound run webhooks",
    text: "Signs run webhooks (a LangGraph run's `webhook`, POSTed when the run ends) per Standard Webhooks: `whsec_` and the base64 of 24 to 64 random bytes (shorter stops the process). Unset: deliveries go unsigned, as LangGraph's server sends them. Never logged. See [Run webhooks](../http-contract.md#run-webhooks).",
  },
  SERVICE_WEBHOOK_ALLOW_PRIVATE: {
    group: "Outbound run webhooks",
    text: "Let run webhooks go to loopback, link-local, private (RFC 1918), CGNAT and ULA addresses; otherwise such a delivery is refused and logged, checked on the address connected to at each attempt.",
  },
  SERVICE_WEBHOOK_BACKOFF_MS: {
    group: "Outbound run webhooks",
    text: "Pause before a run webhook's second attempt, doubling before each next one; 5 attempts in all, retried after no answer, 408, 429 or 5xx.",
  },
  SERVICE_WEBHOOK_TIMEOUT_MS: {
    group: "Outbound run webhooks",
    text: "Bound of one run webhook attempt, connection to the answer's status (100–600000); past it the attempt counts as no answer.",
  },
  WORKER_PORT: {
    group: "Runs and workers",
    text: "Port of the worker's own probes and `/metrics`.",
  },
  WORKER_CONCURRENCY: {
    group: "Runs and workers",
    text: "Runs one worker (or the embedded process) executes at a time (1–1000).",
  },
  WORKER_STALLED_INTERVAL_MS: {
    group: "Runs and workers",
    text: "Lock duration of a run job; a worker silent this long has its run taken over by another.",
  },
  WORKER_MAX_STALLS: {
    group: "Runs and workers",
    text: "Times a run job may stall (its worker killed, or silent past `WORKER_STALLED_INTERVAL_MS`) before it fails; its run then ends `failed`.",
  },
  WORKER_WEBHOOK_CONCURRENCY: {
    group: "Runs and workers",
    text: "Run webhook deliveries one worker (or the embedded process) attempts at once (1–1000).",
  },
  WORKER_WEBHOOK_PER_TENANT: {
    group: "Runs and workers",
    text: "Of those slots, the most one tenant's deliveries hold at once; its other deliveries wait (no attempt spent) while other tenants' take the free slots, so a tenant whose receiver hangs never delays another's.",
  },
  RUN_STEP_LIMIT: {
    group: "Runs and workers",
    text: "Node executions after which a run fails (stops graphs that loop forever); a graph's own `recursionLimit` replaces it, a LangGraph client's `config.recursion_limit` can only lower it.",
  },
  RUN_TIMEOUT_MS: {
    group: "Runs and workers",
    text: "Deadline of a run started without `timeout_ms`, from its creation; past it the run is cancelled with `error: \"timeout\"`. `0`: none.",
  },
  RUN_JOB_ATTEMPTS: {
    group: "Runs and workers",
    text: "Tries of a run job that fails for infrastructure reasons (Redis unreachable), 0.5 s doubling between them; then its run ends `failed`. The process that enqueues a job fixes its tries: set it alike on API and workers.",
  },
  RUN_REAPER_INTERVAL_MS: {
    group: "Runs and workers",
    text: "Pause between reaper passes (one worker at a time): a run `queued` or `running` with no job left, unchanged this long, ends `failed`.",
  },
  AGENTS_MODULE: {
    group: "Features",
    text: "Path of a `.js`, `.mjs` or `.ts` module whose agents (made with `defineAgent`) replace the built-in `echo`, `human-review` and `stream-words` (see [Your own agents](../guides/agents.md)).",
  },
  SERVICE_LANGGRAPH_JSON: {
    group: "Features",
    text: "Path of a `langgraph.json` whose LangGraph.js graphs are served beside the agents, each as the agent of its graph id (see [LangGraph graphs](../guides/langgraph.md)); needs `@langchain/langgraph` 1.x and `@langchain/core` installed (see [LangGraph graphs](../guides/langgraph.md), \"Supported versions\"). `agentplane dev --config <file>` sets it. Formerly `LANGGRAPH_CONFIG`: a path there is still read as this setting for one release, with a warning.",
  },
  LANGGRAPH_CONFIG: {
    group: "Features",
    text: "What it means to LangGraph's server: per-graph default config and context, as a JSON object `{\"<graph id>\": {\"configurable\": {…}, \"context\": {…}}}` (also from the `env` of `langgraph.json`); a run's own values win.",
  },
  SERVICE_CORS_ORIGINS: {
    group: "Features",
    text: "Origins browsers may call the API from: `*`, a comma-separated list (`https://chat.example.com,https://admin.example.com`), or `off` (no CORS headers). Unset: the `http.cors` of `langgraph.json`, else `*`, as LangGraph's server (no credentials: keys and tokens travel in headers, which a page of another origin must hold anyway); with `SERVICE_AUTH=none`, pages of loopback origins only (`http://localhost:3000`), and a request from a page of any other origin is 403. `allow_origin_regex` must match the whole origin.",
  },
  LOG_LEVEL: {
    group: "Process",
    text: "pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Each request is a line at `info`, the probes and `/metrics` at `debug`; each run that ends is one `info` line (`run completed`, `run failed`, `run cancelled`) with `run_id`, `agent_id`, `status` and `duration_ms`.",
  },
  LOG_FORMAT: {
    group: "Process",
    text: "`json`: JSON lines on stdout, for log collectors. `pretty`: readable lines (pino-pretty) for a terminal.",
  },
  WEBHOOK_HOST: {
    group: "Webhook receiver",
    shown: "`0.0.0.0`; `127.0.0.1` with `WEBHOOK_INSECURE` and no secret",
    text: "Listen address of the receiver. Open (no secret, no signature), it answers only loopback and `SERVICE_ALLOWED_HOSTS` names and no request with an `Origin`.",
  },
  WEBHOOK_PORT: {
    group: "Webhook receiver",
    text: "Listen port; the receiver serves `POST /webhook` and every path beneath it.",
  },
  WEBHOOK_SECRET: {
    group: "Webhook receiver",
    text: "Shared secret expected in `X-Webhook-Secret` (constant-time compare); empty turns the check off, which needs a signature scheme or `WEBHOOK_INSECURE=true`.",
  },
  WEBHOOK_SIGNATURE: {
    group: "Webhook receiver",
    text: "`none`, `standard-webhooks` (`webhook-id`/`webhook-timestamp`/`webhook-signature`; 5 minutes old to 30 s ahead; each `webhook-id` handled once) or `github` (`X-Hub-Signature-256`; each `X-GitHub-Delivery` handled once a day), verified over the raw body.",
  },
  WEBHOOK_SIGNING_SECRET: {
    group: "Webhook receiver",
    text: "Key of the signature scheme (`whsec_…` base64 for Standard Webhooks); required unless `none`.",
  },
  WEBHOOK_TENANT: {
    group: "Webhook receiver",
    text: "Tenant of the runs started.",
  },
  WEBHOOK_ROUTES: {
    group: "Webhook receiver",
    text: "`<event type>=<agent id>,…`; the type is an exact `X-Event-Type` value or `*` for every delivery. A route to an unregistered agent stops the process at start.",
  },
  WEBHOOK_INSECURE: {
    group: "Webhook receiver",
    shown: "`false`",
    text: "`true` lets the receiver start with neither `WEBHOOK_SECRET` nor a signature scheme (anyone who reaches it can start runs).",
  },
  SLACK_BOT_TOKEN: {
    group: "Chat gateway",
    shown: "empty",
    text: "Bot token (`xoxb-…`); turns Slack on.",
  },
  SLACK_SIGNING_SECRET: {
    group: "Chat gateway",
    shown: "empty",
    text: "Required with the token: verifies `/slack/events` and `/slack/interactions`.",
  },
  SLACK_API_URL: {
    group: "Chat gateway",
    shown: "`https://slack.com/api`",
    text: "The Web API base.",
  },
  SLACK_AGENT: {
    group: "Chat gateway",
    shown: "empty",
    text: "The agent or graph answering messages (an unregistered one stops the start); empty: messages are not answered.",
  },
  SLACK_APPROVALS_CHANNEL: {
    group: "Chat gateway",
    shown: "empty",
    text: "Channel id for approvals of runs not started from Slack; needs `SLACK_APPROVERS`.",
  },
  SLACK_APPROVERS: {
    group: "Chat gateway",
    shown: "empty",
    text: "`<user id>:<role>,…`, role `user` or `admin`; empty: no approval is posted.",
  },
  SLACK_TENANT: {
    group: "Chat gateway",
    shown: "`DefaultTenant`",
    text: "Tenant of its runs and approvals.",
  },
  DISCORD_PUBLIC_KEY: {
    group: "Chat gateway",
    shown: "empty",
    text: "Required with `DISCORD_BOT_TOKEN`: the application's Ed25519 public key (64 hex digits). `DISCORD_API_URL` defaults to `https://discord.com/api/v10`; `DISCORD_APPROVALS_CHANNEL` and approver ids are Discord snowflakes.",
  },
  TELEGRAM_SECRET_TOKEN: {
    group: "Chat gateway",
    shown: "empty",
    text: "Required with `TELEGRAM_BOT_TOKEN` in webhook mode: the secret token given to `setWebhook` (1-256 of `A-Za-z0-9_-`); refused in polling mode. `TELEGRAM_API_URL` defaults to `https://api.telegram.org`; `TELEGRAM_APPROVALS_CHAT` is a chat id, `TELEGRAM_APPROVERS` Telegram user ids.",
  },
  TELEGRAM_MODE: {
    group: "Chat gateway",
    shown: "`webhook`",
    text: "How updates arrive: `webhook` (pushed to `POST /telegram/webhook`, needs `TELEGRAM_SECRET_TOKEN` and a public URL) or `polling` (no public URL: one API process at a time, the holder of a lease in the backend, long-polls `getUpdates` after deleting the bot's webhook; an update is confirmed only once handled; a stopped poller's successor takes over within a second, a crashed one's within 30 s).",
  },
  SERVICE_TENANT_MAX_QUEUED: {
    group: "Fair share between tenants",
    text: "Runs one tenant may have waiting for a worker slot (delayed starts included); a start past it is 429 `rate_limited` with `Retry-After: 5`, nothing stored; `0`: no cap. A probe, not a reservation (docs/http-contract.md: starts racing past it, and on Redis replicas bursting below half the cap, may pass it by what they start at once).",
  },
  SERVICE_TENANT_MAX_RUNNING: {
    group: "Fair share between tenants",
    text: "Runs one tenant may have admitted to worker slots at once; `0`: no cap beyond its fair share.",
  },
  SERVICE_TENANTS: {
    group: "Fair share between tenants",
    text: "Per-tenant overrides as JSON, `{\"acme\": {\"weight\": 2, \"max_running\": 8, \"max_queued\": 5000}}` (weight 1–100, default 1); set it alike on every process; a bad value stops the start naming it.",
  },
  SERVICE_AGENT_MAX_RUNNING: {
    group: "Fair share between tenants",
    shown: "unset (no cap but an agent's own)",
    text: "Most runs of an agent admitted to worker slots at once, all tenants together, as `<agent id>:<runs>` pairs: `researcher:2,writer:5`. It overrides what an agent declares (`maxConcurrency` of `defineAgent`, `\"agentplane\": {\"max_concurrency\": n}` of a graph's entry in `langgraph.json`); `0` lifts the agent's cap. A run of an agent at its cap is not refused: it stays `queued` until one of the agent's runs ends, while other agents' runs go on being admitted. Set it alike on every process; a bad value stops the start naming it.",
  },
  SERVICE_METRICS_TENANTS: {
    group: "Fair share between tenants",
    text: "Tenants labelled in `agentplane_tenant_runs_queued` and `agentplane_tenant_runs_running` (the busiest by queued + running at each scrape); the rest are summed under `tenant=\"(other)\"` (not a tenant id: ids cannot hold parentheses). `0`: no per-tenant gauges.",
  },
  DISCORD_BOT_TOKEN: {
    group: "Chat gateway",
    shown: "empty",
    text: "Bot token; turns Discord on (needs `DISCORD_PUBLIC_KEY`).",
  },
  DISCORD_API_URL: {
    group: "Chat gateway",
    shown: "`https://discord.com/api/v10`",
    text: "The platform API base.",
  },
  DISCORD_AGENT: {
    group: "Chat gateway",
    shown: "empty",
    text: "The agent or graph answering messages (an unregistered one stops the start); empty: messages are not answered.",
  },
  DISCORD_APPROVALS_CHANNEL: {
    group: "Chat gateway",
    shown: "empty",
    text: "Discord channel id (a snowflake) for approvals of runs not started from Discord; needs `DISCORD_APPROVERS`.",
  },
  DISCORD_APPROVERS: {
    group: "Chat gateway",
    shown: "empty",
    text: "`<user id>:<role>,…`, role `user` or `admin`; empty: no approval is posted.",
  },
  DISCORD_TENANT: {
    group: "Chat gateway",
    shown: "`DefaultTenant`",
    text: "Tenant of its runs and approvals.",
  },
  TELEGRAM_BOT_TOKEN: {
    group: "Chat gateway",
    shown: "empty",
    text: "Bot token; turns Telegram on (needs `TELEGRAM_SECRET_TOKEN` unless `TELEGRAM_MODE=polling`).",
  },
  TELEGRAM_API_URL: {
    group: "Chat gateway",
    shown: "`https://api.telegram.org`",
    text: "The platform API base.",
  },
  TELEGRAM_AGENT: {
    group: "Chat gateway",
    shown: "empty",
    text: "The agent or graph answering messages (an unregistered one stops the start); empty: messages are not answered.",
  },
  TELEGRAM_APPROVALS_CHAT: {
    group: "Chat gateway",
    shown: "empty",
    text: "Telegram chat id (an integer) for approvals of runs not started from Telegram; needs `TELEGRAM_APPROVERS`.",
  },
  TELEGRAM_APPROVERS: {
    group: "Chat gateway",
    shown: "empty",
    text: "`<user id>:<role>,…`, role `user` or `admin`; empty: no approval is posted.",
  },
  TELEGRAM_TENANT: {
    group: "Chat gateway",
    shown: "`DefaultTenant`",
    text: "Tenant of its runs and approvals.",
  },
};
