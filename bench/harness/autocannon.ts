import { createRequire } from 'node:module';

/** The part of autocannon's programmatic API this benchmark uses (the package ships no types). */
interface AutocannonOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  requests?: { method: string; setupRequest?: (req: { path: string }) => { path: string; body?: string; headers?: Record<string, string> } }[];
  method?: string;
  headers?: Record<string, string>;
}

interface Histogram {
  average: number;
  p50: number;
  p99: number;
}

interface AutocannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
}

const autocannon = createRequire(import.meta.url)('autocannon') as (options: AutocannonOptions) => Promise<AutocannonResult>;

/** One endpoint as loaded: the method, and the path (with query) of the n-th request. */
export interface Endpoint {
  name: string;
  method: 'GET' | 'POST';
  path: (n: number) => string;
  body?: (n: number) => string;
}

export interface LoadResult {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx answers, errors and timeouts: a measurement with any of these is not valid. */
  failures: number;
  total: number;
}

/**
 * Loads `endpoint` on `baseUrl` with `connections` connections for `durationSec` seconds.
 * req/s is autocannon's mean of its per-second samples; latencies have 1 ms resolution.
 */
export async function load(baseUrl: string, endpoint: Endpoint, connections: number, durationSec: number): Promise<LoadResult> {
  let n = 0;
  const result = await autocannon({
    url: baseUrl,
    connections,
    duration: durationSec,
    requests: [
      {
        method: endpoint.method,
        setupRequest: (req) => {
          const i = n++;
          return endpoint.body
            ? { ...req, path: endpoint.path(i), body: endpoint.body(i), headers: { 'content-type': 'application/json' } }
            : { ...req, path: endpoint.path(i) };
        },
      },
    ],
  });
  return {
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
    total: result.requests.total,
  };
}
