/** Attempts of one run webhook delivery in all (the first and four retries). */
export const WEBHOOK_ATTEMPTS = 5;

/** Pause before a delivery's second attempt, doubling before each next one (SERVICE_WEBHOOK_BACKOFF_MS). */
export const DEFAULT_WEBHOOK_BACKOFF_MS = 10_000;

/** How run webhooks are retried unless configured otherwise. */
export const DEFAULT_WEBHOOK_RETRY = Object.freeze({ attempts: WEBHOOK_ATTEMPTS, backoffMs: DEFAULT_WEBHOOK_BACKOFF_MS });

/**
 * Delivery slots of one worker when the configuration does not say (WORKER_WEBHOOK_CONCURRENCY,
 * WORKER_WEBHOOK_PER_TENANT): 16 at once, at most 4 held by one tenant's deliveries, so a
 * tenant whose receiver hangs takes a quarter of a worker's slots, never all of them.
 */
export const DEFAULT_WEBHOOK_SLOTS = Object.freeze({ concurrency: 16, perTenant: 4 });

/** Bound of one delivery attempt, connection to the answer's status, by default (SERVICE_WEBHOOK_TIMEOUT_MS). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

/** The longest run webhook URL, in bytes of its text (LangGraph's `webhook`). */
export const MAX_WEBHOOK_URL_BYTES = 2048;

/** A webhook that is a path (`/custom/webhook`): delivered, as LangGraph's server does, to the `http.app` of langgraph.json in the delivering process. */
export const isWebhookPath = (value: string): boolean => value.startsWith('/') && !value.startsWith('//');

/**
 * Why `value` cannot be a run webhook URL, or null when it can: an absolute `http` or `https`
 * URL with a host, or with `paths` (the process has an `http.app`) a path; at most
 * {@link MAX_WEBHOOK_URL_BYTES}. Where it points (a private address) is decided when it is
 * called, since a name may resolve elsewhere by then.
 */
export function webhookUrlProblem(value: string, options: { paths?: boolean } = {}): string | null {
  if (Buffer.byteLength(value, 'utf8') > MAX_WEBHOOK_URL_BYTES) return `at most ${MAX_WEBHOOK_URL_BYTES} bytes`;
  if (isWebhookPath(value)) return options.paths ? null : 'a path, which is delivered to the http.app of langgraph.json, and there is none';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'not an http or https URL';
  if (url.hostname === '') return 'a URL without a host';
  return null;
}

/** What logs show of a webhook URL: its origin, never its path or query, which may carry a token. */
export function webhookOrigin(value: string): string {
  if (isWebhookPath(value)) return '(the http.app)';
  try {
    return new URL(value).origin;
  } catch {
    return '(not a URL)';
  }
}
