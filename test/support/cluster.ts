import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * Starts the topology of docker-compose.yml on loopback with real processes and the same
 * nginx configuration file (deploy/nginx/agentplane.conf); only upstream.conf and
 * server.conf are rendered for loopback, as deploy/nginx/README.md describes.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const redis = await startPrivateRedis({ persist: options.persistRedis ?? false });
  const prefix = uniquePrefix('cluster');
  const common = {
    REDIS_URL: redis.url,
    SERVICE_KEY_PREFIX: prefix,
    AGENTS_MODULE: 'test/fixtures/agents.ts',
    LOG_LEVEL: 'info',
    SERVICE_TRUST_PROXY: 'true',
    SERVICE_SHUTDOWN_DELAY_MS: '500',
    WORKER_STALLED_INTERVAL_MS: '2000',
    // Every request reaches the APIs from nginx's one address; tests of the limiter set it.
    SERVICE_RATE_LIMIT: 'off',
    ...options.env,
  };
  const apiPorts = await Promise.all(Array.from({ length: options.apis ?? 3 }, () => freePort()));
  const startApi = (index: number) =>
    startProcess({ entry: 'src/main/api.ts', port: apiPorts[index], env: { ...common, SERVICE_REPLICA_ID: `api-${index + 1}` } });
  const startWorker = () => startProcess({ entry: 'src/main/worker.ts', portVariable: 'WORKER_PORT', env: common });
  const apis = await Promise.all(apiPorts.map((_, i) => startApi(i)));
  const workers = await Promise.all(Array.from({ length: options.workers ?? 2 }, () => startWorker()));

  const dir = mkdtempSync(join(tmpdir(), 'agentplane-nginx-'));
  const port = await freePort();
  copyFileSync('deploy/nginx/agentplane.conf', join(dir, 'agentplane.conf'));
  writeFileSync(
    join(dir, 'upstream.conf'),
    `upstream agentplane_api {\n${apiPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n')}\n    keepalive 32;\n    keepalive_timeout 60s;\n}\n`,
  );
  writeFileSync(join(dir, 'server.conf'), `listen 127.0.0.1:${port};\naccess_log access.log agentplane;\n`);
  const nginx: ChildProcess = spawn('nginx', ['-p', `${dir}/`, '-c', join(dir, 'agentplane.conf'), '-e', join(dir, 'error.log')], {
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('nginx to answer', async () => (await fetch(`${url}/health/live`)).ok, 15_000);

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
    stop: async () => {
      await new Promise<void>((resolve) => {
        if (nginx.exitCode !== null) return resolve();
        nginx.once('exit', () => resolve());
        nginx.kill('SIGTERM');
      });
      await Promise.all([...apis, ...workers].map((p) => p.stop()));
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
