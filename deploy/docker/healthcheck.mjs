/* global process, fetch, AbortSignal */
// Docker HEALTHCHECK of the agentplane image. A container runs one process, so only that
// process's port answers on loopback: the check asks GET /health/live on HEALTHCHECK_PORT when
// set, otherwise on the api, worker and webhooks ports in turn. Any HTTP answer below 500
// counts as alive (each of the three serves /health/live and answers 200).
const ports = process.env.HEALTHCHECK_PORT
  ? [process.env.HEALTHCHECK_PORT]
  : [process.env.SERVICE_PORT || 8420, process.env.WORKER_PORT || 8421, process.env.WEBHOOK_PORT || 8422];

for (const port of ports) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/live`, { signal: AbortSignal.timeout(2000) });
    if (response.status < 500) process.exit(0);
  } catch {
    // Not this port (connection refused) or no answer in time: try the next one.
  }
}
process.exit(1);
