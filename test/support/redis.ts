import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

/** A Redis for a test file: its URL and how to let it go. */
export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

/** A redis-server child process the test owns, so it can stop and restart it. */
export interface PrivateRedis extends TestRedis {
  port: number;
  /** Kills the server (SIGKILL); data is lost, as with a crashed in-memory Redis. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** SIGSTOP: the server keeps its connections but answers nothing, as a stalled Redis does. */
  pause(): void;
  /** SIGCONT after {@link pause}. */
  resume(): void;
  /** True between a start and a kill. */
  running(): boolean;
  /** The server's process id while it runs (benchmarks count its CPU). */
  pid(): number | undefined;
}

const HOW_TO_GET_ONE =
  'No Redis for the tests: set REDIS_URL, or install redis-server (apt-get install -y redis-server), ' +
  'or run a Docker engine for testcontainers.';

export function uniquePrefix(name = 'test'): string {
  return `${name}-${randomUUID().slice(0, 8)}`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Finds a Redis in the order of ARCHITECTURE.md: `REDIS_URL`; a `redis-server` binary started
 * on a free port for this test file; Docker through testcontainers. Throws with a message
 * saying how to get one when there is none, so a test never skips silently.
 */
export async function startRedis(): Promise<TestRedis> {
  if (process.env.REDIS_URL) {
    return { url: process.env.REDIS_URL, stop: async () => {} };
  }
  if (hasRedisServer()) return startPrivateRedis();
  try {
    const { GenericContainer } = await import('testcontainers');
    const container = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
    return {
      url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    throw new Error(`${HOW_TO_GET_ONE} (testcontainers: ${(error as Error).message})`, { cause: error });
  }
}

export interface PrivateRedisOptions {
  /**
   * Keep data across kill/restart in an append-only file fsynced on every write, as a
   * production Redis would, so "no acknowledged write lost" can be checked. @defaultValue false
   */
  persist?: boolean;
  /** Listen port. @defaultValue a free loopback port */
  port?: number;
  /** Config file given first (a sentinel needs one it can rewrite). */
  configFile?: string;
  /** More arguments after the defaults (cluster or replication settings, `--sentinel`). */
  args?: string[];
  /** `requirepass`: the server wants it, PING is sent after AUTH, and the URL carries it. */
  password?: string;
  /**
   * TLS only (`--port 0 --tls-port <port>`), with this certificate; PING goes over TLS and the
   * URL is `rediss://`. Clients are not asked for certificates.
   */
  tls?: TlsFiles;
}

/** A CA and a server certificate for 127.0.0.1 signed by it, as files (see {@link makeCertificates}). */
export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA certificate (PEM). */
  ca: string;
}

/** Makes a throwaway CA and a certificate for 127.0.0.1 in `dir` with openssl. */
export function makeCertificates(dir: string): TlsFiles {
  const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
  const openssl = (...args: string[]) => {
    const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}`);
  };
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=agentplane-test-ca', '-keyout', 'ca.key', '-out', 'ca.crt');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-copy_extensions', 'copy', '-out', 'server.crt');
  return { ...files, ca: readFileSync(files.caFile, 'utf8') };
}

/** The server arguments of TLS only on `port`. */
export function tlsArgs(tls: TlsFiles, port: number): string[] {
  return ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile, '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no'];
}

/**
 * Every redis-server child still running. A test file stops its servers when it ends, yet a
 * hook that failed or timed out would leave them running for good: they are killed at the end
 * of the test file (pass or fail), and when this process exits at the latest.
 */
const servers = new Set<ChildProcess>();
if (process.env.VITEST) afterAll(killPrivateServers);
process.once('exit', () => {
  for (const server of servers) server.kill('SIGKILL');
});

/** Kills (SIGKILL) every redis-server child started by {@link startPrivateRedis} that is still running. */
export async function killPrivateServers(): Promise<void> {
  await Promise.all(
    [...servers].map(
      (server) =>
        new Promise<void>((resolve) => {
          server.once('exit', () => resolve());
          server.kill('SIGCONT');
          server.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * Starts a private redis-server child on a free port (fault tests stop and restart it). A
 * free port taken by another test file's server before ours bound it makes ours exit: it is
 * started again on another one.
 */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startPrivateRedisOnce(options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || options.port !== undefined || attempt === 3) throw error;
    }
  }
}

/** The server exited before it answered: its port was taken between freePort() and its bind. */
class PortTakenError extends Error {}

async function startPrivateRedisOnce(options: PrivateRedisOptions): Promise<PrivateRedis> {
  if (!hasRedisServer()) throw new Error(HOW_TO_GET_ONE);
  const port = options.port ?? (await freePort());
  const dir = options.persist ? mkdtempSync(join(tmpdir(), 'agentplane-redis-')) : undefined;
  const persistence = dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] : ['--appendonly', 'no'];
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const auth = options.password === undefined ? [] : ['--requirepass', options.password];
    const first = options.configFile ? [options.configFile] : [];
    const listen = options.tls ? tlsArgs(options.tls, port) : ['--port', String(port)];
    const started = spawn('redis-server', [...first, ...listen, '--bind', '127.0.0.1', '--save', '', ...persistence, ...auth, ...(options.args ?? [])], {
      stdio: 'ignore',
    });
    child = started;
    servers.add(started);
    started.once('exit', () => servers.delete(started));
    try {
      // A PING answered while our child has exited came from another file's server on the port.
      await waitForPing(port, options.password, options.tls, () => started.exitCode !== null || started.signalCode !== null);
    } catch (error) {
      await kill();
      throw error;
    }
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };

  try {
    await start();
  } catch (error) {
    if (dir) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const stop = async (): Promise<void> => {
    await kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  const signal = (name: NodeJS.Signals) => {
    if (child && child.exitCode === null) child.kill(name);
  };
  return {
    url: `${options.tls ? 'rediss' : 'redis'}://${options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`}127.0.0.1:${port}`,
    port,
    kill,
    restart: start,
    stop: async () => {
      signal('SIGCONT');
      await stop();
    },
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    running: () => child !== undefined && child.exitCode === null,
    pid: () => child?.pid,
  };
}

async function waitForPing(port: number, password: string | undefined, tls: TlsFiles | undefined, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (exited()) throw new PortTakenError(`redis-server on port ${port} exited at start (port taken?)`);
    const client = new Redis({ port, host: '127.0.0.1', password, ...(tls ? { tls: { ca: tls.ca } } : {}), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      if (exited()) throw new PortTakenError(`redis-server on port ${port} exited at start (port taken?)`);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING`, { cause: error });
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      client.disconnect();
    }
  }
}

/**
 * A Redis for the whole test file (started in beforeAll, stopped in afterAll): its URL, and a
 * way to open clients on it that are all disconnected at the end. Call at the top level of a
 * test file (or of a describe block, for its tests alone).
 */
export function useRedis(): { readonly url: string; connect(options?: RedisOptions): Redis } {
  let redis: TestRedis | undefined;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis?.stop();
  });
  return {
    get url() {
      if (!redis) throw new Error('useRedis(): the url is only available inside tests and hooks.');
      return redis.url;
    },
    connect(options: RedisOptions = {}) {
      if (!redis) throw new Error('useRedis(): connect() is only available inside tests and hooks.');
      const client = new Redis(redis.url, options);
      clients.push(client);
      return client;
    },
  };
}

/**
 * A private redis-server (see startPrivateRedis) for the enclosing describe block or test file:
 * started in beforeAll, stopped in afterAll. Its url, port and controls are available inside
 * tests and hooks.
 */
export function usePrivateRedis(options: PrivateRedisOptions = {}): PrivateRedis {
  let redis: PrivateRedis | undefined;
  beforeAll(async () => {
    redis = await startPrivateRedis(options);
  });
  afterAll(async () => {
    await redis?.stop();
  });
  const started = (): PrivateRedis => {
    if (!redis) throw new Error('usePrivateRedis(): the server is only available inside tests and hooks.');
    return redis;
  };
  return {
    get url() {
      return started().url;
    },
    get port() {
      return started().port;
    },
    stop: () => started().stop(),
    kill: () => started().kill(),
    restart: () => started().restart(),
    pause: () => started().pause(),
    resume: () => started().resume(),
    running: () => started().running(),
    pid: () => started().pid(),
  };
}
