import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { startProcess, type AgentProcess } from './processes.js';
import { freePort, startPrivateRedis, uniquePrefix, type PrivateRedis } from './redis.js';
import { waitFor } from './wait.js';

export interface ClusterOptions {
  apis?: number;
  workers?: number;
  /** Extra environment for every API and worker process. */
  env?: Record<string, string>;
  /** Redis keeps acknowledged writes across a kill (AOF, fsync always). @defaultValue false */
  persistRedis?: boolean;
}

/** A loopback stand-in for the Helm/compose topology: Redis, N APIs, M workers, nginx. */
export interface Cluster {
  /** nginx: the only address clients use. */
  url: string;
  redis: PrivateRedis;
  apis: AgentProcess[];
  workers: AgentProcess[];
  /** Starts replica `index` again (same port and replica id) after it stopped. */
  restartApi(index: number): Promise<AgentProcess>;
  startWorker(): Promise<AgentProcess>;
  /** Lines of nginx's access log so far. */
  accessLog(): string[];
  stop(): Promise<void>;
}

/** nginx children still running: killed at the end of the test file, pass or fail, as the other processes are. */
const proxies = new Set<ChildProcess>();
afterAll(() => {
  for (const nginx of proxies) nginx.kill('SIGKILL');
});
process.once('exit', () => {
  for (const nginx of proxies) nginx.kill('SIGKILL');
});

/**
 * Starts the topology of docker-compose.yml on loopback with real processes and the same
 * nginx configuration file (deploy/nginx/agentplane.conf); only upstream.conf and
 * server.conf are rendered for loopback, as deploy/nginx/README.md describes.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const redis = await startPrivateRedis({ persist: options.persistRedis ?? false });
  const apis: AgentProcess[] = [];
  const workers: AgentProcess[] = [];
  let nginx: ChildProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-nginx-'));
  // Stops whatever was started, even when a step fails: also after a start that failed half-way.
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      try {
        await stopNginx(nginx);
        await Promise.allSettled([...apis, ...workers].map((p) => p.stop()));
      } finally {
        await redis.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    })());

  const prefix = uniquePrefix('cluster');
  const common = {
    REDIS_URL: redis.url,
    SERVICE_KEY_PREFIX: prefix,
    AGENTS_MODULE: 'test/fixtures/agents.ts',
    LOG_LEVEL: 'info',
    SERVICE_TRUST_PROXY: 'true',
    // Above nginx's upstream keepalive_timeout (1 s), as deploy/nginx/upstream.conf explains.
    SERVICE_SHUTDOWN_DELAY_MS: '1500',
    WORKER_STALLED_INTERVAL_MS: '2000',
    // Every request reaches the APIs from nginx's one address; tests of the limiter set it.
    SERVICE_RATE_LIMIT: 'off',
    ...options.env,
  };
  const apiPorts: number[] = [];
  const startApi = (index: number) =>
    startProcess({ entry: 'src/main/api.ts', port: apiPorts[index], env: { ...common, SERVICE_REPLICA_ID: `api-${index + 1}` } });
  const startWorker = () => startProcess({ entry: 'src/main/worker.ts', portVariable: 'WORKER_PORT', env: common });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  try {
    apiPorts.push(...(await Promise.all(Array.from({ length: options.apis ?? 3 }, () => freePort()))));
    await Promise.all(apiPorts.map(async (_, i) => (apis[i] = await startApi(i))));
    await Promise.all(Array.from({ length: options.workers ?? 2 }, async () => workers.push(await startWorker())));
    copyFileSync('deploy/nginx/agentplane.conf', join(dir, 'agentplane.conf'));
    writeFileSync(
      join(dir, 'upstream.conf'),
      `upstream agentplane_api {\n${apiPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n')}\n    keepalive 32;\n    keepalive_timeout 1s;\n}\n`,
    );
    writeFileSync(join(dir, 'server.conf'), `listen 127.0.0.1:${port};\naccess_log access.log agentplane;\n`);
    const proxy = spawn('nginx', ['-p', `${dir}/`, '-c', join(dir, 'agentplane.conf'), '-e', join(dir, 'error.log')], { stdio: 'ignore' });
    nginx = proxy;
    proxies.add(proxy);
    proxy.once('exit', () => proxies.delete(proxy));
    await waitFor('nginx to answer', async () => (await fetch(`${url}/health/live`)).ok, 15_000);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url,
    redis,
    apis,
    workers,
    restartApi: async (index) => (apis[index] = await startApi(index)),
    startWorker: async () => {
      const worker = await startWorker();
      workers.push(worker);
      return worker;
    },
    accessLog: () => readFileSync(join(dir, 'access.log'), 'utf8').split('\n').filter(Boolean),
    stop,
  };
}

/** SIGTERM to nginx (a fast shutdown) and resolves once it exited; at once when it is not running. */
function stopNginx(nginx: ChildProcess | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!nginx || nginx.exitCode !== null || nginx.signalCode !== null) return resolve();
    nginx.once('exit', () => resolve());
    nginx.kill('SIGTERM');
  });
}
